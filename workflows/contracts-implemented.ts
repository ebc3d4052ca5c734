import type { AuditWorkflows } from './audit/contract';
import type * as inboxBundle from './inbox';
import type { InboxWorkflows } from './inbox/contract';
import type * as relayBundle from './relay';
import type { RelayWorkflows } from './relay/contract';
import type { RetentionWorkflows } from './retention/contract';
import type * as scheduledBundle from './scheduled';

// Each contract owns its workflows' names and signatures; the workflow modules implement them.
// This module is where the compiler holds the two together: a workflow renamed, missing, or with
// another signature than its contract says fails `tsc` here. Nothing imports it (a contract
// importing its implementation would be a cycle), so nothing loads it.

type Implements<Bundle extends Contract, Contract> = Bundle;

export type RelayBundle = Implements<typeof relayBundle, RelayWorkflows>;
export type InboxBundle = Implements<typeof inboxBundle, InboxWorkflows>;
export type ScheduledBundle = Implements<typeof scheduledBundle, RetentionWorkflows & AuditWorkflows>;
