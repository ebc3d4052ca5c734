import assert from 'node:assert/strict';
import fs from 'node:fs';
import { GUARANTEES_MD, RESULTS_JSON, renderTable, tableInDoc, withTable } from '../../tools/soak/network-table';
import type { NetworkSoakResult } from '../../tools/soak/network-soak';

// The matrix table in docs/guarantees.md is generated from the network soak's JSON
// (tools/soak/network-table.ts): a hand edit of either, or a new run whose table was not
// regenerated, fails here.
describe('the gray-failure matrix table in docs/guarantees.md', () => {
  it('is the table generated from tools/soak/results/network-soak.json', () => {
    const result = JSON.parse(fs.readFileSync(RESULTS_JSON, 'utf8')) as NetworkSoakResult;
    assert.equal(tableInDoc(fs.readFileSync(GUARANTEES_MD, 'utf8')), renderTable(result).trim());
  });

  it('puts a missed bound in the table with its figure', () => {
    const result = JSON.parse(fs.readFileSync(RESULTS_JSON, 'utf8')) as NetworkSoakResult;
    const run = { ...result.runs[0]!, takeoverMs: 71_000, missed: ['takeover 71000 ms (bound 65000 ms)'] };
    const table = renderTable({ ...result, runs: [run] });
    assert.match(table, /\*\*1\*\*: takeover 71000 ms \(bound 65000 ms\)/);
    assert.match(withTable(fs.readFileSync(GUARANTEES_MD, 'utf8'), table), /\*\*1\*\*: takeover 71000 ms/);
  });
});
