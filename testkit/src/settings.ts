/**
 * The settings every test platform and every platform process a test starts run with. A module of its own,
 * without imports, so that what needs only these does not load the platform.
 */

/** The bootstrap administrator's password on every test platform (unless a test sets its own). */
export const testAdminPassword = 'plant-admin-password-7';

/**
 * Cheap password hashes for test platforms (scrypt at 2^12, p=1, instead of 2^15, p=3): the suite signs in hundreds
 * of times, and the cost of a hash is not what it tests.
 */
export const testHashing = { NODE_ENV: 'test', PASSWORD_HASH_COST: '12' } as const;
