// The gray-failure matrix (docs/guarantees.md#gray-failures-the-matrix): which worker's link to
// which service breaks, and how. Shared by the matrix test and `npm run soak -- --network`.

export const WORKER_KINDS = ['relay', 'consumer', 'retention'] as const;
export const SERVICES = ['postgres', 'kafka', 'temporal'] as const;
export const FAULTS = ['black-hole', 'reset', 'latency', 'one-way'] as const;

export type WorkerKind = (typeof WORKER_KINDS)[number];
export type Service = (typeof SERVICES)[number];
export type FaultKind = (typeof FAULTS)[number];

export interface Cell {
  kind: WorkerKind;
  service: Service;
  fault: FaultKind;
}

/**
 * The bounds every cell is held to. Takeover: every event committed before the fault is applied
 * by the consumers (so the other workers carried the faulty one's load) within 60 s plus one
 * batch's time. Rejoin: a relay or consumer that stepped aside holds work again within 30 s of the
 * heal; a retention worker has nobody to hand over to, so its bound is a retention run that
 * completes within 60 s of the heal (a silent Temporal connection takes the SDK's keepalive, up
 * to 45 s, to be replaced).
 */
export const BOUNDS = { takeoverMs: 60_000, batchMs: 5_000, rejoinMs: 30_000, retentionResumeMs: 60_000 } as const;

/** How each fault is healed: the nastier heal for the faults that leave connections open. */
export const HEAL: Record<FaultKind, 'dead' | 'alive'> = { 'black-hole': 'dead', reset: 'alive', latency: 'alive', 'one-way': 'dead' };

/** What each fault does to the link (test/kit/fault-proxy.ts). */
export const FAULT_MEANING: Record<FaultKind, string> = {
  'black-hole': 'bytes dropped both ways, connections kept open; healed with the old connections dead',
  reset: 'every connection reset at its next byte, new ones too; healed by removing the toxic',
  latency: '200 ms ± 20 ms added on the service → worker stream (one round trip +200 ms)',
  'one-way': 'bytes from the worker dropped, the service → worker stream intact; healed with the old connections dead',
};

export function cellName(c: Cell): string {
  return `${c.kind}/${c.service}/${c.fault}`;
}

export function allCells(): Cell[] {
  return WORKER_KINDS.flatMap((kind) => SERVICES.flatMap((service) => FAULTS.map((fault) => ({ kind, service, fault }))));
}
