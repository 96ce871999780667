/** The part of autocannon's API the bench fallback uses (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  interface Result {
    requests: { total: number; average: number };
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  interface Options {
    url: string;
    connections: number;
    duration: number;
    requests?: Array<{
      setupRequest?: (request: Record<string, unknown>) => Record<string, unknown>;
    }>;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
