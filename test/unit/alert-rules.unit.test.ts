import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { ALERT_RULES_FILE } from '../../tools/local-stack/prometheus';

// The alert rules are Prometheus' own language: Prometheus' checker (Debian package
// `prometheus`, installed by tools/scripts/prerequisites.sh) is the judge of their syntax.
describe('tools/local-stack/prometheus/alerts.yml', () => {
  it('passes promtool check rules', () => {
    const out = execFileSync('promtool', ['check', 'rules', ALERT_RULES_FILE], { encoding: 'utf8' });
    assert.match(out, /SUCCESS: \d+ rules found/);
  });
});
