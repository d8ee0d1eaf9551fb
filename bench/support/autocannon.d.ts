// The part of autocannon's API the benchmarks use (the package ships no types).
declare module "autocannon" {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    duration?: number;
    connections?: number;
    overallRate?: number;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    /** How many in all (requests) over the run. */
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
