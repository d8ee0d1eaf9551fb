/**
 * The datasets tables (migration 2). OWNED BY the datasets work.
 *
 * A dataset's rows live in files (DATA_DIR/datasets/<account>/<dataset>/<n>.jsonl); these
 * tables hold what is known about them. `datasets.state` is kept equal to the state of the
 * newest version (CREATING when there is none) unless the dataset is DELETED, so the list
 * filter can use an index.
 */
export const DATASETS_SCHEMA = `
  CREATE TABLE datasets (
    seq INTEGER PRIMARY KEY,              -- creation order, for newest-first paging
    account_id TEXT NOT NULL REFERENCES accounts (id),
    dataset_id TEXT NOT NULL,
    display_name TEXT NOT NULL,
    source TEXT NOT NULL,
    state TEXT NOT NULL,
    latest_version_no INTEGER NOT NULL,   -- 0 before the first upload
    total_bytes INTEGER NOT NULL,
    create_time_ms INTEGER NOT NULL,
    update_time_ms INTEGER NOT NULL,
    UNIQUE (account_id, dataset_id)       -- ids stay taken after a (soft) delete
  ) STRICT;
  CREATE INDEX datasets_by_account_state ON datasets (account_id, state, seq);

  CREATE TABLE dataset_versions (
    dataset_seq INTEGER NOT NULL REFERENCES datasets (seq),
    version_no INTEGER NOT NULL,
    state TEXT NOT NULL,
    stored INTEGER NOT NULL,              -- 1 once the file is complete and synced to disk (the upload was answered 200)
    owner TEXT,                           -- the server receiving the upload or running the validation (server/datasets/owners.ts)
    bytes INTEGER NOT NULL,
    total_lines INTEGER NOT NULL,
    valid_lines INTEGER NOT NULL,
    example_count INTEGER NOT NULL,
    estimated_token_count INTEGER NOT NULL,
    first_invalid_line INTEGER,           -- with first_invalid_reason, set on FAILED
    first_invalid_reason TEXT,
    top_level_keys TEXT NOT NULL,         -- JSON array of strings, sorted
    format TEXT,                          -- SFT | PREFERENCE once validated
    create_time_ms INTEGER NOT NULL,
    update_time_ms INTEGER NOT NULL,
    PRIMARY KEY (dataset_seq, version_no)
  ) STRICT;
  -- Restart recovery looks for versions left UPLOADING or VALIDATING.
  CREATE INDEX dataset_versions_by_state ON dataset_versions (state);
`;
