-- Places in the account lock: an attempt takes one before its password or code is checked, so that
-- parallel attempts can never have more checks evaluated than the lock allows. `pending` counts the
-- places held by checks in flight; they fall back to 0 after `pending_until`, should a replica die
-- holding one.
alter table auth.login_failures add column pending integer not null default 0;
alter table auth.login_failures add column pending_until timestamptz;
