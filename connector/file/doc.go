// Package file is the file connector: a source that reads CSV or JSON-lines
// rows from a file and, with follow, what is appended to it later
// (CREATE SOURCE ... WITH (connector = 'file', path = '...', format = 'csv')).
//
// Options (WITH keys, lower case):
//
//	path       the file (required); relative paths are relative to the
//	           server's working directory
//	format     csv or json (or the FORMAT clause; when both are given they
//	           must agree); when neither is, the extension decides (.csv;
//	           .json, .jsonl, .ndjson)
//	header     csv: 'true' skips the first record (default 'false')
//	delimiter  csv: the one-byte field separator (default ',')
//	follow     'true': at the end of the file keep polling it (every 50 ms)
//	           for appended complete lines; default 'false': stop at the end
//	max_line_bytes  the longest record read (default DefaultMaxLineBytes);
//	           a longer one is a bad record (54000), discarded as it is read
//
// Where files may be: see Access (OpenAccess). Only regular files are
// read; the rules are checked at Open and again on the file a reader
// actually opened.
//
// CSV is PostgreSQL's COPY CSV: fields separated by the delimiter, quoted
// with " (a quote inside a quoted field is doubled, and a quoted field may
// hold delimiters and newlines), an unquoted empty field is NULL while ""
// is the empty string. A record must have exactly one field per column.
// JSON lines: one object per line whose keys are column names (exact, else
// ASCII case-insensitive); a missing key or null is NULL, keys that name no
// column are ignored. A JSON string gives its content, a number or boolean
// its text; a json or jsonb column takes any value as JSON text. Every
// value then goes through the column type's PostgreSQL text input (so
// '2024-01-01 10:00:00' for a timestamp; a timestamptz without a zone is
// UTC). Blank lines are skipped; a final line without a newline is read
// when the file ends (but waited for in follow mode).
//
// Bad records are skipped and counted, not fatal: each is reported to
// ReaderOptions.Errors, if set, as a *pgerr.Error with the SQLSTATE of the
// failure (22P02 invalid input syntax, 22003 out of range, 22P04 a
// malformed CSV record, ...) whose message starts with the file, the line
// and, for a bad value, the column. Reader.Skipped counts them. Errors of
// the file itself (missing without follow: 58P01; unreadable) end Run.
//
// Rotation: a followed file truncated in place or replaced at its path (a
// new inode) is read again from its start; each time an 01000 *pgerr.Error
// naming the file goes to ReaderOptions.Errors and Reader.Rewinds counts it.
//
// Restarts: Reader.Position is the byte offset after the last record
// consumed, with the line number and whether the csv header is still to
// skip; Reader.Seek starts a reader there (a file now shorter than the
// offset was truncated or replaced: it is read from its start, as above).
//
// A Source is immutable and safe for concurrent use; each Reader is owned
// by the goroutine that calls its Run, once, and opens the file itself.
package file
