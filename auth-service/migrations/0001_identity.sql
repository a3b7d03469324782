-- Identity and access: spaces, users with their roles and spaces, token signing keys, sessions and
-- refresh tokens, the account lock, OTP challenges, the auth log and the IP filter.
-- Usernames are unique case-insensitively (username_key is the lower-cased name).

create table auth.spaces (
  id text primary key,
  name text not null,
  created_by text,
  creation_date timestamptz not null default now(),
  last_modified_by text,
  last_modified_date timestamptz not null default now()
);
create unique index spaces_name_key on auth.spaces (name);

create table auth.users (
  id text primary key,
  username text not null,
  username_key text not null,
  password_hash text not null,
  email text,
  phone text,
  enabled boolean not null default true,
  otp_secret text,
  otp_last_step bigint,
  created_by text,
  creation_date timestamptz not null default now(),
  last_modified_by text,
  last_modified_date timestamptz not null default now()
);
create unique index users_username_key on auth.users (username_key);

create table auth.user_roles (
  user_id text not null references auth.users (id) on delete cascade,
  role text not null check (role in ('viewer', 'editor', 'admin')),
  primary key (user_id, role)
);

create table auth.user_spaces (
  user_id text not null references auth.users (id) on delete cascade,
  space_id text not null references auth.spaces (id) on delete cascade,
  primary key (user_id, space_id)
);
create index user_spaces_space on auth.user_spaces (space_id);

create table auth.signing_keys (
  kid text primary key,
  private_jwk text not null,
  public_jwk text not null,
  created timestamptz not null default now()
);

-- A session family: every token pair of one sign-in. The current pair's claims are kept so that a
-- refresh token presented twice within the grace time gets the same pair again (re-signed, never stored).
create table auth.sessions (
  sid text primary key,
  user_id text not null references auth.users (id) on delete cascade,
  created timestamptz not null default now(),
  expires timestamptz not null,
  revoked_at timestamptz,
  current_access_jti text not null,
  current_refresh_jti text not null,
  current_iat bigint not null,
  current_access_exp bigint not null,
  current_refresh_exp bigint not null
);
create index sessions_user on auth.sessions (user_id);
create index sessions_revoked on auth.sessions (revoked_at) where revoked_at is not null;

create table auth.refresh_tokens (
  jti text primary key,
  sid text not null references auth.sessions (sid) on delete cascade,
  expires timestamptz not null,
  used_at timestamptz
);
create index refresh_tokens_sid on auth.refresh_tokens (sid);

create table auth.login_failures (
  username_key text primary key,
  failures integer not null,
  locked_until timestamptz
);

create table auth.otp_challenges (
  token_hash text primary key,
  username_key text not null,
  expires timestamptz not null,
  used boolean not null default false
);

create table auth.auth_log (
  id bigserial primary key,
  username text not null,
  ip text,
  dttm timestamptz not null default now(),
  successful boolean not null,
  msg text not null
);
create index auth_log_newest on auth.auth_log (dttm desc, id desc);

create table auth.ip_settings (
  id integer primary key check (id = 1),
  allowed_ips text not null,
  denied_ips text not null,
  last_modified_by text,
  last_modified_date timestamptz
);
