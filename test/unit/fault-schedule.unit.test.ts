import assert from 'node:assert/strict';
import { faultSchedule } from '../../tools/soak/run-fault-soak';

describe('fault soak schedule', () => {
  it('alternates worker kills and spreads each service crash over the run', () => {
    const schedule = faultSchedule(50, 3);
    assert.equal(schedule.length, 59);
    assert.equal(schedule.filter((f) => f === 'relay').length, 25);
    assert.equal(schedule.filter((f) => f === 'consumer').length, 25);
    for (const service of ['postgres', 'kafka', 'temporal']) assert.equal(schedule.filter((f) => f === service).length, 3);
    const crashAt = schedule.flatMap((f, i) => (f === 'relay' || f === 'consumer' ? [] : [i]));
    const gaps = crashAt.slice(1).map((at, i) => at - crashAt[i]!);
    assert.ok(Math.max(...gaps) - Math.min(...gaps) <= 1, `crashes evenly spread: ${crashAt}`);
  });

  it('still crashes every service when there are no worker kills', () => {
    assert.deepEqual(faultSchedule(0, 1), ['postgres', 'kafka', 'temporal']);
  });
});
