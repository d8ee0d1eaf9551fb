/** The fine-tuning tables (migration 3): jobs, idempotency records, training curves, models. */
export const FINE_TUNING_SCHEMA = `
  CREATE TABLE training_jobs (
    seq INTEGER PRIMARY KEY,              -- creation order, for newest-first paging
    account_id TEXT NOT NULL REFERENCES accounts (id),
    job_id TEXT NOT NULL,
    job_type TEXT NOT NULL,
    state TEXT NOT NULL,
    output_model_id TEXT NOT NULL,
    record TEXT NOT NULL,                 -- the JobRecord as JSON (times as ms)
    lease_owner TEXT,
    lease_until_ms INTEGER,
    create_time_ms INTEGER NOT NULL,
    UNIQUE (account_id, job_id)
  ) STRICT;
  CREATE INDEX training_jobs_by_state ON training_jobs (state, seq);
  CREATE INDEX training_jobs_by_account ON training_jobs (account_id, job_type, seq);

  CREATE TABLE training_job_datasets (
    account_id TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    job_seq INTEGER NOT NULL REFERENCES training_jobs (seq),
    PRIMARY KEY (account_id, dataset_id, job_seq)
  ) STRICT;

  CREATE TABLE idempotency_records (
    account_id TEXT NOT NULL,
    collection TEXT NOT NULL,             -- the job type: keys are per account and collection
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    job_seq INTEGER NOT NULL REFERENCES training_jobs (seq),
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (account_id, collection, idempotency_key)
  ) STRICT;

  CREATE TABLE training_curves (
    job_seq INTEGER NOT NULL REFERENCES training_jobs (seq),
    series TEXT NOT NULL,                 -- training | evaluation
    step INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    loss REAL NOT NULL,
    learning_rate REAL NOT NULL,
    time_ms INTEGER NOT NULL,
    PRIMARY KEY (job_seq, series, step)
  ) STRICT;

  CREATE TABLE account_models (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    model_id TEXT NOT NULL,
    base_model TEXT NOT NULL,
    job_name TEXT NOT NULL,
    adapter_path TEXT NOT NULL,
    create_time_ms INTEGER NOT NULL,
    PRIMARY KEY (account_id, model_id)
  ) STRICT;
`;
