// Package datagen generates rows of random or sequential values for the
// columns of a source, directly into Arrow record batches
// (CREATE SOURCE ... WITH (connector = 'datagen', ...)).
//
// Options (WITH keys, lower case; '-' may be written for '_'):
//
//	rows              number of rows, 0 or absent = unbounded (Flink: number-of-rows)
//	rows_per_second   wall-clock pace of a Reader (Flink: rows-per-second,
//	                  RisingWave: datagen.rows.per.second); the Generator
//	                  itself never waits. 0 or absent = as fast as asked.
//	seed              unsigned 64-bit seed, default 0
//
// and per column <col> (the column's name as declared):
//
//	fields.<col>.kind       random | sequence
//	                        (default: sequence for date, timestamp and
//	                        timestamptz, random for the rest)
//	fields.<col>.start      sequence: first value
//	fields.<col>.end        sequence: last value; the source ends after it
//	fields.<col>.step       sequence: increment (a number, or interval text
//	                        such as '1 second' for date, timestamp, interval)
//	fields.<col>.max_past   timestamp sequence: subtract a random delay in
//	                        [0, max_past] (interval text) from each row's
//	                        time, so rows arrive out of order by at most it
//	fields.<col>.min        random: smallest value (inclusive)
//	fields.<col>.max        random: largest value (inclusive; exclusive for
//	                        double precision, and for real up to rounding)
//	fields.<col>.values     random: pick uniformly from this comma-separated
//	                        list (items trimmed of spaces)
//	fields.<col>.length     random text: number of characters from [A-Za-z0-9]
//	fields.<col>.null_rate  fraction of rows that are NULL, 0..1 (default 0)
//	fields.<col>.seed       this column's seed (default: from seed and the
//	                        column's position)
//
// Bounds and values are text input of the column's type (so
// '2024-01-01 00:00:00+00' for a timestamptz, '12.50' for a numeric) and are
// checked as PostgreSQL checks input (numeric(p,s) overflow, varchar(n)
// length). Defaults by type:
//
//	smallint, integer, bigint   random [0, type max]; sequence start 1, step 1,
//	                            end type max
//	real, double precision      random [0, 1); sequence start 1, step 1, no end
//	numeric                     as integers, with the declared scale, or the
//	                            most fraction digits among the bounds given;
//	                            random [0, 100]
//	text, varchar, char         random: 10 characters (at most n for
//	                            varchar(n), n for char(n)); sequence: the
//	                            decimal numbers of a bigint sequence (for
//	                            varchar(n) and char(n) start and end must fit)
//	boolean                     random true/false
//	date                        sequence from 2024-01-01, step '1 day';
//	                            random [2024-01-01, 2024-12-31]
//	timestamp, timestamptz      sequence from 2024-01-01 00:00:00 (UTC), step
//	                            1 second / rows_per_second when that is set,
//	                            else '1 second'; random
//	                            [2024-01-01, 2025-01-01]
//	interval                    sequence from '0', step '1 second' (months,
//	                            days and time part each advance by the step's);
//	                            random: a time part in [0, '1 hour'] (min and
//	                            max count a month as 30 days and a day as 24 h)
//	json, jsonb                 only values
//
// Other types are refused (0A000); bad options are 22023 errors naming the
// option. With several sequences with an end, the source ends when the
// first one does.
//
// Determinism: the value in row r of column c depends only on the seed (or
// the column's seed), c and r, so the same Config gives the same rows however
// they are split into batches.
//
// Config.Watermark gives, for a sequence column of integers, dates or
// timestamps, a lower bound of every later row's value (its max_past
// included), for the source runtime's watermarks. A Reader (NewReader)
// streams the rows for the runtime, paced at Config.RowsPerSecond; it
// reports its Position (the next row number) for checkpoints and, by Seek,
// starts at one.
//
// A Config is immutable and may be shared; a Generator is not safe for
// concurrent use, and the batches it returns belong to the caller.
package datagen
