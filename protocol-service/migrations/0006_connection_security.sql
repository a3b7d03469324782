-- Security of device connections (IEC 62351-3 TLS, ACSE password): the password and the TLS material
-- (CA, client certificate and its key) sealed under SECRETS_KEY (`enc:v1:…`, bound to the connection), and
-- in plain text only what answers show: the certificates' subjects and expiry dates and the server name.
-- `link_revision` counts changes of what the association depends on (address, port, password, TLS), so that
-- the replica holding a started connection associates again with the new settings.
alter table protocol.connections add column if not exists password_sealed text;
alter table protocol.connections add column if not exists tls_sealed text;
alter table protocol.connections add column if not exists tls_ca_subject text;
alter table protocol.connections add column if not exists tls_ca_expires timestamptz;
alter table protocol.connections add column if not exists tls_client_subject text;
alter table protocol.connections add column if not exists tls_client_expires timestamptz;
alter table protocol.connections add column if not exists tls_server_name text;
alter table protocol.connections add column if not exists link_revision integer not null default 0;
