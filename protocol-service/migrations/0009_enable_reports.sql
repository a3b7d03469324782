-- Report control blocks a connection enables (with a general interrogation) whenever it is started: a JSON
-- array of MMS names (`LD/LLN0$RP$urcbMeas01`). Empty for the connections made before.
alter table protocol.connections add column if not exists enable_reports jsonb not null default '[]'::jsonb;
