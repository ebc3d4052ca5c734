import assert from 'node:assert/strict';
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { contextFromHeaders, headersFromContext } from '../../src/observability/trace-context';

// The library writes and reads the W3C trace context itself (so its runtime needs no OpenTelemetry
// SDK package); what it writes and what it accepts must match OpenTelemetry's own propagator,
// which the producers and consumers of other services use.
const reference = new W3CTraceContextPropagator();
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

function referenceExtract(carrier: Record<string, string>) {
  return trace.getSpanContext(reference.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
}

describe('W3C trace context headers, against OpenTelemetry\'s propagator', () => {
  const inputs: Record<string, string>[] = [
    { traceparent: `00-${TRACE}-${SPAN}-01` },
    { traceparent: `00-${TRACE}-${SPAN}-00`, tracestate: 'vendor=a,other=b' },
    { traceparent: `01-${TRACE}-${SPAN}-01-future-field` },
    { traceparent: `00-${TRACE}-${SPAN}-01-extra` },
    { traceparent: `ff-${TRACE}-${SPAN}-01` },
    { traceparent: `00-${'0'.repeat(32)}-${SPAN}-01` },
    { traceparent: `00-${TRACE}-${'0'.repeat(16)}-01` },
    { traceparent: `00-${TRACE.toUpperCase()}-${SPAN}-01` },
    { traceparent: 'not a traceparent' },
  ];
  for (const carrier of inputs) {
    it(`reads ${JSON.stringify(carrier)} as the reference does`, () => {
      const ours = contextFromHeaders(carrier);
      const theirs = referenceExtract(carrier);
      if (!theirs) return assert.equal(ours, undefined);
      const mine = trace.getSpanContext(ours!);
      assert.ok(mine, 'accepted by the reference, so by us');
      assert.equal(mine.traceId, theirs.traceId);
      assert.equal(mine.spanId, theirs.spanId);
      assert.equal(mine.traceFlags, theirs.traceFlags);
      assert.equal(mine.isRemote, true);
      assert.equal(mine.traceState?.serialize(), theirs.traceState?.serialize());
    });
  }

  it('writes what the reference writes, tracestate included', () => {
    for (const traceFlags of [TraceFlags.NONE, TraceFlags.SAMPLED]) {
      const ctx = reference.extract(ROOT_CONTEXT, { traceparent: `00-${TRACE}-${SPAN}-0${traceFlags}`, tracestate: 'vendor=a' }, defaultTextMapGetter);
      const expected: Record<string, string> = {};
      reference.inject(ctx, expected, defaultTextMapSetter);
      assert.deepEqual(headersFromContext(ctx), expected);
    }
    assert.deepEqual(headersFromContext(ROOT_CONTEXT), {}, 'no span, no headers');
  });
});
