/** The auth service's contract: schemas, session operations for the gateway, administration operations. */
export * from './schemas.ts';
export * from './session_ops.ts';
export * from './admin_ops.ts';
export * from './events.ts';
export * from './ip_rules.ts';
export * from './profile_ops.ts';
export * from './membership_ops.ts';
export * from './token_profile.ts';
