import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// docs/adopting.md's Kysely and Knex snippets are the files test/e2e/adopter.e2e.test.ts compiles
// and runs from the packed package: the page must show each file whole, as it is.
describe('docs/adopting.md shows the query-builder snippets the adopter test runs', () => {
  const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'adopting.md'), 'utf8');
  const blocks = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  for (const snippet of ['kysely-outbox.ts.fixture', 'knex-outbox.ts.fixture']) {
    it(`includes ${snippet} verbatim`, () => {
      const file = fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'adopter-service', snippet), 'utf8');
      assert.ok(blocks.includes(file), `docs/adopting.md has no \`\`\`ts block equal to test/fixtures/adopter-service/${snippet}`);
    });
  }
});
