-- A value's place on the time axis (`t`): the device's time when it carries one that can be believed,
-- its time of receipt otherwise. Values a device or a site buffered during an outage land where they
-- happened, not where the link came back. Partitions stay by day of receipt (`received_at`).
alter table history.points add column if not exists t timestamptz;

-- Values recorded before: the device's time where it lies from 30 days (the default retention) before
-- their receipt to 5 minutes after it; the service places new values by the same rule, from the oldest
-- day it keeps (src/rows.ts, `axisTimeOf`).
update history.points set t = case
    when device_time >= received_at - interval '30 days' and device_time <= received_at + interval '5 minutes' then device_time
    else received_at
  end
  where t is null;
alter table history.points alter column t set not null;

-- Uniqueness as before (the same event carries the same device time), led by the time axis so that one
-- index serves both the redelivery check and an attribute's range reads on `t`.
drop index if exists history.points_once;
create unique index if not exists points_on_axis on history.points (connection_id, reference, t, received_at, rcb, seq);

-- The rollups are by the time axis too: made again from the recorded values.
delete from history.rollup_minute;
delete from history.rollup_hour;
insert into history.rollup_minute as r
    (connection_id, reference, bucket, space, count, numbers, min, max, sum, first_at, last_at, last_num, last_value, worst)
  select connection_id, reference, date_bin('1 minute', t, timestamptz '2000-01-01 00:00:00+00'), min(space), count(*),
    count(num), min(num), max(num), sum(num), min(t), max(t),
    (array_agg(num order by t desc))[1], (array_agg(value order by t desc))[1], max(validity)
  from history.points group by 1, 2, 3;
insert into history.rollup_hour as r
    (connection_id, reference, bucket, space, count, numbers, min, max, sum, first_at, last_at, last_num, last_value, worst)
  select connection_id, reference, date_bin('1 hour', t, timestamptz '2000-01-01 00:00:00+00'), min(space), count(*),
    count(num), min(num), max(num), sum(num), min(t), max(t),
    (array_agg(num order by t desc))[1], (array_agg(value order by t desc))[1], max(validity)
  from history.points group by 1, 2, 3;
