-- Sites: a connection belongs to the site whose protocol service talks to its device. `central` is the
-- platform's own; a protocol service started with SITE=<name> holds that site's connections only.
alter table protocol.connections add column if not exists site text not null default 'central';
create index if not exists connections_site on protocol.connections (site);
