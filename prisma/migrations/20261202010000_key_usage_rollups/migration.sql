-- Sums of key_usage kept beside it, so the reads over all keys do not add up every row of the
-- range: "usage_hours" holds each hour's counts over all keys (the totals), "key_usage_days"
-- each key's counts per UTC day (the busiest keys; the hours at a range's ends come from
-- key_usage). "rows" counts the key_usage rows a sum holds: a sum exists exactly while its rows do.
CREATE TABLE "usage_hours" (
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "requests" BIGINT NOT NULL,
    "limited" BIGINT NOT NULL,
    "rows" BIGINT NOT NULL,

    CONSTRAINT "usage_hours_pkey" PRIMARY KEY ("hour")
);

CREATE TABLE "key_usage_days" (
    "day" TIMESTAMPTZ(3) NOT NULL,
    "key_id" BIGINT NOT NULL,
    "requests" BIGINT NOT NULL,
    "limited" BIGINT NOT NULL,
    "rows" BIGINT NOT NULL,

    CONSTRAINT "key_usage_days_pkey" PRIMARY KEY ("day", "key_id")
);

-- Adds a change of key_usage to the sums: one element per row, the counts inserted (rows 1) or
-- taken away (negated, rows -1). The sums are taken in hour and day-key order, so statements
-- sharing sums lock them in the same order. A sum left without rows goes.
CREATE FUNCTION "key_usage_add_sums"(
    "p_key_ids" BIGINT[], "p_hours" TIMESTAMPTZ[], "p_requests" BIGINT[], "p_limited" BIGINT[], "p_rows" BIGINT[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "usage_hours" ("hour", "requests", "limited", "rows")
        SELECT c."hour", sum(c."requests"), sum(c."limited"), sum(c."rows")
        FROM unnest("p_key_ids", "p_hours", "p_requests", "p_limited", "p_rows") AS c ("key_id", "hour", "requests", "limited", "rows")
        GROUP BY c."hour" ORDER BY c."hour"
    ON CONFLICT ("hour") DO UPDATE SET "requests" = "usage_hours"."requests" + excluded."requests",
        "limited" = "usage_hours"."limited" + excluded."limited", "rows" = "usage_hours"."rows" + excluded."rows";
    INSERT INTO "key_usage_days" ("day", "key_id", "requests", "limited", "rows")
        SELECT date_trunc('day', c."hour", 'UTC'), c."key_id", sum(c."requests"), sum(c."limited"), sum(c."rows")
        FROM unnest("p_key_ids", "p_hours", "p_requests", "p_limited", "p_rows") AS c ("key_id", "hour", "requests", "limited", "rows")
        GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("day", "key_id") DO UPDATE SET "requests" = "key_usage_days"."requests" + excluded."requests",
        "limited" = "key_usage_days"."limited" + excluded."limited", "rows" = "key_usage_days"."rows" + excluded."rows";
    IF -1 = ANY("p_rows") THEN
        DELETE FROM "usage_hours" WHERE "rows" = 0 AND "hour" = ANY("p_hours");
        DELETE FROM "key_usage_days" WHERE "rows" = 0 AND ("day", "key_id") IN (
            SELECT date_trunc('day', c."hour", 'UTC'), c."key_id" FROM unnest("p_hours", "p_key_ids") AS c ("hour", "key_id"));
    END IF;
END;
$$;

-- Each statement on key_usage adds its change to the sums once, from its transition tables (the
-- flush writes a batch in one statement). A trigger with transition tables takes one event each.
CREATE FUNCTION "key_usage_sum_inserts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "key_usage_add_sums"(c."key_ids", c."hours", c."requests", c."limited", c."rows")
    FROM (SELECT array_agg("key_id"), array_agg("hour"), array_agg("requests"), array_agg("limited"), array_agg(1::BIGINT)
          FROM "new_rows") AS c ("key_ids", "hours", "requests", "limited", "rows")
    WHERE c."key_ids" IS NOT NULL;
    RETURN NULL;
END;
$$;

CREATE FUNCTION "key_usage_sum_updates"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "key_usage_add_sums"(c."key_ids", c."hours", c."requests", c."limited", c."rows")
    FROM (SELECT array_agg("key_id"), array_agg("hour"), array_agg("requests"), array_agg("limited"), array_agg("rows")
          FROM (SELECT "key_id", "hour", "requests", "limited", 1::BIGINT AS "rows" FROM "new_rows"
                UNION ALL
                SELECT "key_id", "hour", -"requests", -"limited", -1::BIGINT FROM "old_rows") AS "change"
         ) AS c ("key_ids", "hours", "requests", "limited", "rows")
    WHERE c."key_ids" IS NOT NULL;
    RETURN NULL;
END;
$$;

CREATE FUNCTION "key_usage_sum_deletes"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "key_usage_add_sums"(c."key_ids", c."hours", c."requests", c."limited", c."rows")
    FROM (SELECT array_agg("key_id"), array_agg("hour"), array_agg(-"requests"), array_agg(-"limited"), array_agg(-1::BIGINT)
          FROM "old_rows") AS c ("key_ids", "hours", "requests", "limited", "rows")
    WHERE c."key_ids" IS NOT NULL;
    RETURN NULL;
END;
$$;

CREATE TRIGGER "key_usage_sum_inserts" AFTER INSERT ON "key_usage"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "key_usage_sum_inserts"();
CREATE TRIGGER "key_usage_sum_updates" AFTER UPDATE ON "key_usage"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "key_usage_sum_updates"();
CREATE TRIGGER "key_usage_sum_deletes" AFTER DELETE ON "key_usage"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "key_usage_sum_deletes"();

-- The sums of the rows already there.
INSERT INTO "usage_hours" ("hour", "requests", "limited", "rows")
    SELECT "hour", sum("requests"), sum("limited"), count(*) FROM "key_usage" GROUP BY "hour";
INSERT INTO "key_usage_days" ("day", "key_id", "requests", "limited", "rows")
    SELECT date_trunc('day', "hour", 'UTC'), "key_id", sum("requests"), sum("limited"), count(*)
    FROM "key_usage" GROUP BY 1, 2;
