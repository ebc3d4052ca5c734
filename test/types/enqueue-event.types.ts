import type { EnqueueExecutor } from 'temporal-outbox';
import { defineEventHandler, enqueue } from 'temporal-outbox';
import { OrderPlacedV1, OrderPlacedV2 } from '../fixtures/events/order-placed';

// Compile-time checks of the typed enqueue and handler: `tsc -p tsconfig.json` (npm run typecheck)
// fails if any line marked @ts-expect-error compiles, i.e. if the compiler stopped refusing a
// wrong payload. Never run, only typechecked.

export async function typedEnqueue(tx: EnqueueExecutor) {
  await enqueue(tx, OrderPlacedV1, { order_id: 'o-1', customer: 'Ada Lovelace', total: 1250 });
  await enqueue(tx, OrderPlacedV2, { order_id: 'o-1', first_name: 'Ada', last_name: 'Lovelace', total_minor: 1250, event_id: 'evt-1' }, { key: 'o-1' });

  // @ts-expect-error a required field is missing
  await enqueue(tx, OrderPlacedV1, { order_id: 'o-1', customer: 'Ada Lovelace' });
  // @ts-expect-error a field of the wrong type
  await enqueue(tx, OrderPlacedV1, { order_id: 'o-1', customer: 'Ada Lovelace', total: '1250' });
  // @ts-expect-error a field the type does not have (v1's `total` after the rename)
  await enqueue(tx, OrderPlacedV2, { order_id: 'o-1', first_name: 'Ada', last_name: 'Lovelace', total_minor: 1, total: 1 });
  // @ts-expect-error an event id must be a string
  await enqueue(tx, OrderPlacedV1, { order_id: 'o-1', customer: 'Ada', total: 1, event_id: 7 });
}

export const typedHandler = defineEventHandler(OrderPlacedV2, {
  async apply(tx, event) {
    const total: number = event.data.total_minor;
    const first: string = event.data.first_name;
    // @ts-expect-error v2 data has no `total`
    void event.data.total;
    await tx.query('SELECT $1::bigint, $2::text', [total, first]);
  },
});
