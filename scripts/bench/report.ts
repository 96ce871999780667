/** Turns the bench's measurements into the printed table and bench/results.md. */
import { cpus, totalmem } from "node:os";

export interface ScenarioSummary {
  id: string;
  label: string;
  target: "real" | "hono" | "static" | "deno" | "libsql" | "replica";
  connections: number;
  rounds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  anchorLabel?: string;
  anchorRps?: number;
  /** Median over rounds of real/anchor req/s, each round's pair measured back to back. */
  ratio?: number;
  skipped?: string;
  /** Many-store scenarios of the real server: how many stores (or "hot": one store beside cold churn). */
  stores?: number | "hot";
  /** Medians over rounds, read from the real server after each run. */
  missesPerSec?: number;
  rssMb?: number;
  openFiles?: number;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export interface BenchReport {
  date: string;
  machine: string[];
  settings: string[];
  scenarios: ScenarioSummary[];
  extras: Array<[string, string]>;
  targets: Target[];
  queryPlan: { sql: string; plan: string[] };
  notes: string[];
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export async function machineDescription(): Promise<string[]> {
  const cpuInfo = await Bun.file("/proc/cpuinfo")
    .text()
    .catch(() => "");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuInfo)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const wrk = Bun.which("wrk")
    ? Bun.spawnSync(["wrk", "--version"]).stdout.toString().split("\n")[0].split(" [")[0]
    : "not installed";
  return [
    `CPU: ${model}, ${cpus().length} cores (nproc)`,
    `Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `OS: ${process.platform} ${Bun.spawnSync(["uname", "-r"]).stdout.toString().trim()}`,
    `Bun ${Bun.version}; load generator: ${wrk}`,
  ];
}

const fmt = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value)
    ? "–"
    : value.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits });

function scenarioRows(scenarios: ScenarioSummary[]): string[][] {
  return scenarios.map((s) =>
    s.skipped
      ? [
          s.label,
          "skipped",
          "",
          "",
          "",
          "",
          "",
          s.skipped.length > 70 ? `${s.skipped.slice(0, 69)}…` : s.skipped,
        ]
      : [
          s.label,
          fmt(s.rps),
          fmt(s.p50Ms, 2),
          fmt(s.p99Ms, 2),
          String(s.connections),
          s.anchorLabel ? `${fmt(s.anchorRps)} (${s.anchorLabel})` : "",
          s.ratio === undefined ? "" : fmt(s.ratio, 2),
          s.errors ? `${s.errors} errors` : "",
        ],
  );
}

const HEADER = ["Scenario", "req/s", "p50 ms", "p99 ms", "conns", "anchor req/s", "ratio", "note"];

const STORES_HEADER = ["Scenario", "req/s", "ratio", "p99 ms", "misses/s", "RSS MB", "open files"];

/** The store pool's figures of the scenarios spread over small stores. */
function storeRows(scenarios: ScenarioSummary[]): string[][] {
  return scenarios
    .filter((s) => s.stores !== undefined && !s.skipped)
    .map((s) => [
      s.label,
      fmt(s.rps),
      s.ratio === undefined ? "" : fmt(s.ratio, 2),
      fmt(s.p99Ms, 2),
      fmt(s.missesPerSec),
      fmt(s.rssMb),
      fmt(s.openFiles),
    ]);
}

/** A Markdown table; a `|` in a cell is escaped so it stays in its cell. */
export function markdownTable(header: string[], rows: string[][]): string {
  const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(escapeCell).join(" | ")} |`),
  ].join("\n");
}

function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const verdict = (met: boolean | null) => (met === null ? "not measured" : met ? "met" : "MISSED");

export function printReport(report: BenchReport): void {
  console.log(`\n${textTable(HEADER, scenarioRows(report.scenarios))}\n`);
  const stores = storeRows(report.scenarios);
  if (stores.length) console.log(`${textTable(STORES_HEADER, stores)}\n`);
  for (const [name, value] of report.extras) console.log(`${name}: ${value}`);
  console.log("\nTargets:");
  for (const t of report.targets)
    console.log(`  ${verdict(t.met).padEnd(12)} ${t.name}: ${t.measured} (target ${t.goal})`);
  console.log(`\nDeep page query plan:\n  ${report.queryPlan.plan.join("\n  ")}\n`);
}

export function markdownReport(report: BenchReport): string {
  const targetRows = report.targets.map((t) => [t.name, t.goal, t.measured, verdict(t.met)]);
  return `# Benchmark results

Written by \`npm run bench\` (scripts/bench/run.ts) on ${report.date}. Do not edit by hand.

## Machine

${report.machine.map((m) => `- ${m}`).join("\n")}

## Settings

${report.settings.map((m) => `- ${m}`).join("\n")}

## Throughput and latency (medians over rounds)

"ratio" is the real server's req/s over its bare anchor's, taken per round (the two run
back to back) and then the median over rounds.

${markdownTable(HEADER, scenarioRows(report.scenarios))}

## Many stores (the store pool after each run)

${markdownTable(STORES_HEADER, storeRows(report.scenarios))}

## Other measurements

${report.extras.map(([name, value]) => `- ${name}: ${value}`).join("\n")}

## Targets

${markdownTable(["Target", "Goal", "Measured", "Verdict"], targetRows)}

## Query plan of the deep page

\`\`\`sql
EXPLAIN QUERY PLAN ${report.queryPlan.sql}
\`\`\`

\`\`\`
${report.queryPlan.plan.join("\n")}
\`\`\`
${report.notes.length ? `\n## Notes\n\n${report.notes.map((n) => `- ${n}`).join("\n")}\n` : ""}`;
}
