import assert from 'node:assert/strict';
import { describeMissing, missingPrerequisites, type MachineFacts } from '../../tools/local-stack/prerequisites';

// `npm test` on a fresh machine stops before running, with one sentence per missing package and
// the apt-get command that installs it.
function machine(commands: string[], files: string[] = ['/usr/lib/postgresql/15/bin/postgres', '/usr/lib/postgresql/15/bin/initdb'], pip = true, env: NodeJS.ProcessEnv = {}): MachineFacts {
  return { has: (c) => commands.includes(c), exists: (f) => files.includes(f), pip, env };
}
const EVERYTHING = ['java', 'mvn', 'prometheus', 'promtool', 'chromium', 'openssl'];

describe('test prerequisites', () => {
  it('a machine with everything lacks nothing', () => {
    assert.deepEqual(missingPrerequisites(machine(EVERYTHING)), []);
  });

  it('a bare machine names every package, each with its install command', () => {
    const missing = missingPrerequisites(machine([], [], false));
    assert.deepEqual(
      [...new Set(missing.map((p) => p.debianPackage))].sort(),
      ['chromium', 'maven', 'openjdk-17-jre-headless', 'openssl', 'postgresql-15', 'prometheus', 'python3-pip'].sort(),
    );
    const sentences = describeMissing(missing);
    for (const p of missing) assert.ok(sentences.some((s) => s.includes(p.what) && s.includes(`apt-get install -y ${p.debianPackage}`)), `a sentence for ${p.what}`);
    assert.match(sentences.at(-1)!, /apt-get install -y .*postgresql-15.*prometheus/);
  });

  it('prometheus missing alone is one sentence naming the package and the command', () => {
    const sentences = describeMissing(missingPrerequisites(machine(EVERYTHING.filter((c) => c !== 'prometheus' && c !== 'promtool'))));
    assert.equal(sentences.length, 2, 'prometheus and promtool, both from one package: no summary line');
    for (const s of sentences) assert.match(s, /apt-get install -y prometheus`\.$/);
  });

  it('pip is needed only while no Temporal CLI is at hand; services of your own need no local binaries', () => {
    assert.deepEqual(missingPrerequisites(machine([...EVERYTHING, 'temporal'], undefined, false)), []);
    assert.deepEqual(missingPrerequisites(machine(EVERYTHING, ['/usr/lib/postgresql/15/bin/postgres', '/usr/lib/postgresql/15/bin/initdb', 'c/bin/temporal'], false, { OUTBOX_CACHE_DIR: 'c' })), []);
    assert.deepEqual(missingPrerequisites(machine(EVERYTHING, undefined, false)).map((p) => p.debianPackage), ['python3-pip']);
    const own = machine(['prometheus', 'promtool', 'chromium', 'openssl'], [], false, { DATABASE_URL: 'postgres://x', KAFKA_BROKERS: 'k:9092', TEMPORAL_ADDRESS: 't:7233' });
    assert.deepEqual(missingPrerequisites(own), []);
  });
});
