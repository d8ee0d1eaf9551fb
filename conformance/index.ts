/**
 * The conformance kit as a library: load a profile, run the transcripts against an
 * implementation, read the report. The CLI (cli.ts) is a thin layer over these.
 */
export {
  loadProfile,
  parseProfile,
  profileHas,
  ProfileError,
  PROFILE_KEYS,
  type Profile,
  type AccountRef,
  type ProfileAccounts,
  type ProfileModels,
  type ProfileSettings,
  type ProfileTimeouts,
} from "./profile.ts";
export {
  runConformance,
  select,
  SelectionError,
  groupByRule,
  OUTCOMES,
  type Outcome,
  type FailureExchange,
  type RunOptions,
  type RunReport,
  type StepFailure,
  type TranscriptResult,
} from "./runner.ts";
export {
  capabilityOperations,
  implementedOperations,
  missingOperations,
  operationsOf,
  profileNeeds,
  didYouMean,
  CapabilityError,
} from "./capabilities.ts";
export { EXIT } from "./exit.ts";
export {
  loadTranscripts,
  loadTranscript,
  kitRoot,
  transcriptsDir,
  TranscriptError,
  type Transcript,
  type Step,
  type Expectation,
} from "./transcript.ts";
export { Contract, defaultContractPath, type Operation } from "./contract.ts";
export {
  loadRules,
  staticCoverage,
  CoverageTracker,
  type Rule,
  type CoverageSummary,
  type StaticCoverage,
} from "./coverage.ts";
export { match, matches, getPath, type Mismatch } from "./matchers.ts";
export {
  checkResponsesStream,
  checkChatStream,
  checkMessagesStream,
  checkHeaders,
  checkStream,
  type ProtocolProblem,
} from "./protocol.ts";
export { parseSse, formatSse } from "./sse.ts";
export {
  textReport,
  junitReport,
  jsonReport,
  byArea,
  failuresByRule,
  outcomeCounts,
  cleanupLines,
  timeLimitLines,
  OUTCOME_LABEL,
  type AreaSummary,
  type RuleSummary,
} from "./report.ts";
export { GoldenWriter, loadGolden, type Golden } from "./golden.ts";
export { startMockServer, type MockServer } from "./mock-server.ts";
export {
  fuzz,
  fuzzStateless,
  fuzzStateful,
  findingText,
  type FuzzOptions,
  type FuzzResult,
  type Finding,
  type ReferenceHooks,
} from "./fuzz/index.ts";
