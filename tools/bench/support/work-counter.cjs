// Preloaded into a process (NODE_OPTIONS=--require …/work-counter.cjs) with WORK_COUNTS_DIR set:
// counts the work the process asks of PostgreSQL and Kafka, and its own CPU time, so two builds of
// the library can be compared by what they do per event rather than by how long it took on a
// machine whose load nobody controls (npm run bench:work-counts).
//
// - every node-postgres query (Client.prototype.query: pool.query and checked-out clients alike;
//   one query is one round trip), by its text with whitespace collapsed and cut at 90 characters;
// - every kafkajs request (Connection.prototype.send), by API name;
// - process.cpuUsage(), user + system µs.
//
// On SIGUSR2 it writes the counts so far to WORK_COUNTS_DIR/<pid>.json (synchronously, so the
// file is complete when its `seq` changes), and once more at exit. Both modules are resolved from
// the process's working directory, the tree whose workers are measured. Plain CommonJS: it runs
// before any TypeScript loader is registered.

const fs = require('node:fs');
const path = require('node:path');

// Worker threads (Temporal's workflow threads) may load preloads too: they share the pid, and
// only the main thread's counts are the process's.
const dir = require('node:worker_threads').isMainThread ? process.env.WORK_COUNTS_DIR : undefined;

function patchPg(counts) {
  let pg;
  try {
    pg = require(require.resolve('pg', { paths: [process.cwd()] }));
  } catch {
    return;
  }
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    const text = typeof config === 'string' ? config : config && typeof config.text === 'string' ? config.text : `(${(config && config.constructor && config.constructor.name) || typeof config})`;
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    counts.pgQueries += 1;
    counts.pgByText[key] = (counts.pgByText[key] || 0) + 1;
    return original.call(this, config, ...rest);
  };
}

function patchKafkajs(counts) {
  let Connection;
  try {
    Connection = require(require.resolve('kafkajs/src/network/connection', { paths: [process.cwd()] }));
  } catch {
    return;
  }
  const original = Connection.prototype.send;
  Connection.prototype.send = function countedSend(protocol, ...rest) {
    const name = (protocol && protocol.request && protocol.request.apiName) || 'unknown';
    counts.kafkaRequests += 1;
    counts.kafkaByApi[name] = (counts.kafkaByApi[name] || 0) + 1;
    return original.call(this, protocol, ...rest);
  };
}

if (dir) {
  const counts = { pid: process.pid, seq: 0, pgQueries: 0, pgByText: {}, kafkaRequests: 0, kafkaByApi: {}, cpuMicros: 0 };
  patchPg(counts);
  patchKafkajs(counts);
  const file = path.join(dir, `${process.pid}.json`);
  const write = () => {
    const cpu = process.cpuUsage();
    counts.cpuMicros = cpu.user + cpu.system;
    counts.seq += 1;
    try {
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(counts));
      fs.renameSync(`${file}.tmp`, file);
    } catch {
      // the directory went away with the run that made it
    }
  };
  process.on('SIGUSR2', write);
  process.on('exit', write);
}
