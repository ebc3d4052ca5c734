import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig, PROJECT_ROOT } from '../../config/env';

// No Docker engine runs where the tests run, so this checks what can be checked without one:
// the file parses, the host ports are the code's defaults, the workers it starts exist, and
// the variables it sets are ones the code reads.
describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  const defaults = loadConfig({});
  const hostPorts = (service: string): number[] =>
    (compose.services[service].ports as string[]).map((p) => Number(p.split(':').slice(-2)[0]));

  it('publishes each service on the port the code uses by default', () => {
    assert.deepEqual(hostPorts('postgres'), [defaults.local.pgPort]);
    assert.deepEqual(hostPorts('kafka'), [defaults.local.kafkaPort]);
    assert.deepEqual(hostPorts('temporal'), [defaults.local.temporalPort]);
    assert.deepEqual(hostPorts('temporal-ui'), [defaults.local.temporalUiPort]);
  });

  it('advertises the host listener the code connects to', () => {
    assert.match(compose.services.kafka.environment.KAFKA_ADVERTISED_LISTENERS, new RegExp(`HOST://${defaults.kafka.brokers[0]}`));
  });

  it('starts worker entry points that exist, with configuration the code accepts', () => {
    for (const name of ['relay-worker', 'consumer-worker', 'retention-worker']) {
      const service = compose.services[name];
      const entry = service.command.at(-1) as string;
      assert.ok(fs.existsSync(path.join(PROJECT_ROOT, entry)), `${name} runs ${entry}, which must exist`);
      const config = loadConfig(service.environment);
      assert.equal(config.database.local, false, `${name} must use the compose PostgreSQL`);
      assert.equal(config.kafka.local, false);
      assert.equal(config.temporal.local, false);
      assert.equal(service.depends_on.setup.condition, 'service_completed_successfully');
    }
  });

  it('uses official images only', () => {
    const images = Object.values(compose.services).map((s) => (s as { image: string }).image);
    for (const image of images) assert.match(image, /^(postgres|apache\/kafka|temporalio\/[a-z-]+|node):/);
  });
});
