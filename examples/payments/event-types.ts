/** The event type the payments example emits and its consumer applies. */
export const PAYMENT_CONFIRMED = 'payment_confirmed';
