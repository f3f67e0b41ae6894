// Checks `bcwire export` with DuckDB, the query engine analysts use on one
// machine: the per-opcode counts that SQL finds in the exported Parquet
// tables equal the counts of `bcwire stats --json` for the same captures,
// direction by direction, and every session is in the sessions table.
//
// Usage: node check.mjs BCWIRE_BINARY CAPTURE...   (run `npm ci` here first)
import { DuckDBInstance } from '@duckdb/node-api';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [bcwire, ...captures] = process.argv.slice(2);
if (!bcwire || captures.length === 0) {
  console.error('usage: node check.mjs BCWIRE_BINARY CAPTURE...');
  process.exit(2);
}

// bcwire exits 1 for damaged input (damaged.pcap is damaged on purpose):
// keep its output, fail on anything else.
function run(args) {
  try {
    return execFileSync(bcwire, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30 });
  } catch (e) {
    if (e.status === 1) return e.stdout;
    throw e;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bcwire-export-'));
let failed = 0;
let passed = 0;
try {
  run(['export', '-q', '-o', dir, ...captures]);
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = async (sql) => (await db.runAndReadAll(sql)).getRowObjects();

  const want = new Map();
  const stats = JSON.parse(run(['stats', '--json', '-q', ...captures]));
  for (const o of stats.opcodes) want.set(`${o.dir} ${o.opcode}`, o.count);

  const got = new Map();
  const msgs = `read_parquet('${dir}/messages/**/*.parquet', hive_partitioning = true)`;
  for (const r of await rows(`SELECT dir, opcode, count(*) AS n FROM ${msgs} WHERE opcode IS NOT NULL GROUP BY ALL`)) {
    got.set(`${r.dir} ${r.opcode}`, Number(r.n));
  }
  for (const key of new Set([...want.keys(), ...got.keys()])) {
    if (want.get(key) !== got.get(key)) {
      console.error(`FAIL ${key}: stats --json ${want.get(key) ?? 0}, SQL over the export ${got.get(key) ?? 0}`);
      failed++;
    } else {
      passed++;
    }
  }
  const sessions = `read_parquet('${dir}/sessions/**/*.parquet', hive_partitioning = true)`;
  const [{ n }] = await rows(`SELECT count(*) AS n FROM ${sessions}`);
  if (Number(n) !== stats.session_count) {
    console.error(`FAIL sessions: stats --json ${stats.session_count}, SQL over the export ${n}`);
    failed++;
  } else {
    passed++;
  }
  // The README's example question: players and StateUpdates per server per day.
  for (const r of await rows(`SELECT server, date, count(DISTINCT client) AS players,
      count(*) FILTER (name = 'StateUpdate') AS state_updates FROM ${msgs} WHERE kind = 'message' GROUP BY ALL ORDER BY ALL`)) {
    console.log(`${r.server} ${r.date}: ${r.players} players, ${r.state_updates} StateUpdates`);
  }

  // Capture names that Hive readers treat specially (DuckDB refused the
  // whole directory for a '?' or a newline, read a%3Db back as a=b, and
  // a=b was stored as a_b), and the same name from two folders: DuckDB
  // reads each name back as it was, with every capture's rows once, also
  // after a capture is exported a second time.
  const names = ['a=b?.pcap', 'a%3Db.pcap', 'a_b.pcap', 'new\nline.pcap', 'sp ace [1].pcap'];
  const src = join(dir, 'in');
  const copies = [];
  for (const [i, name] of names.entries()) {
    mkdirSync(join(src, String(i)), { recursive: true });
    copies.push(join(src, String(i), name));
    copyFileSync(captures[0], copies.at(-1));
  }
  mkdirSync(join(src, 'again'));
  copies.push(join(src, 'again', names[0]));
  copyFileSync(captures[0], copies.at(-1));
  const odd = join(dir, 'odd');
  run(['export', '-q', '-o', odd, ...copies]);
  run(['export', '-q', '-o', odd, copies[0]]); // replaces its parts
  const [{ n: perCapture }] = await rows(`SELECT count(*) AS n FROM read_parquet('${dir}/messages/**/*.parquet', hive_partitioning = true) WHERE file = '${captures[0]}'`);
  const got2 = new Map();
  for (const r of await rows(`SELECT capture, count(*) AS n FROM read_parquet('${odd}/messages/**/*.parquet', hive_partitioning = true) GROUP BY ALL`)) {
    got2.set(r.capture, Number(r.n));
  }
  for (const name of names) {
    const want = Number(perCapture) * (name === names[0] ? 2 : 1);
    if (got2.get(name) !== want) {
      console.error(`FAIL capture ${JSON.stringify(name)}: ${got2.get(name) ?? 0} rows, want ${want}; read back ${JSON.stringify([...got2.keys()])}`);
      failed++;
    } else {
      passed++;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`duckdb export check: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
