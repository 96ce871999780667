export {};

/**
 * Summarises a `bun --cpu-prof-md` profile by sample count (self samples per function),
 * which is robust to the idle gaps that inflate the markdown's self times.
 *   bun scripts/bench/profile-summary.ts bench/tmp/profile/CPU.….md [top]
 */
const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: profile-summary.ts PROFILE.md [top]");
  process.exit(2);
}
const text = await Bun.file(file).text();
const entries: Array<{ name: string; where: string; samples: number }> = [];
const re = /^### `(.+?)`\n`(.+?)` \| Self: [^|]+\| Total: [^|]+\| Samples: (\d+)/gm;
for (let m = re.exec(text); m; m = re.exec(text))
  entries.push({ name: m[1], where: m[2], samples: Number(m[3]) });
const total = entries.reduce((n, e) => n + e.samples, 0);
entries.sort((a, b) => b.samples - a.samples);
for (const e of entries.slice(0, Number(topArg ?? 40))) {
  console.log(
    `${((100 * e.samples) / total).toFixed(1).padStart(5)}%  ${String(e.samples).padStart(6)}  ${e.name}  ${e.where.replace(`${process.cwd()}/`, "")}`,
  );
}
console.log(`total self samples: ${total}`);
