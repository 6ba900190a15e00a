package engine

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// copyOptions are COPY's WITH options, checked as PostgreSQL 15's
// ProcessCopyOptions checks them (same order, SQLSTATEs and messages).
// Every PostgreSQL 15 option is honoured: FREEZE is accepted because rows a
// COPY stores are visible to everyone once it commits; ENCODING accepts the
// server encoding (UTF8, or SQL_ASCII which converts nothing) and refuses
// any other by name.
type copyOptions struct {
	format      string // text, csv, binary
	delimiter   string
	null        string
	header      bool
	headerMatch bool // COPY FROM: the header's names must match the columns
	quote       string
	escape      string
	freeze      bool

	forceQuoteAll bool     // FORCE_QUOTE *
	forceQuote    []string // FORCE_QUOTE (cols)
	forceNotNull  []string // FORCE_NOT_NULL (cols)
	forceNull     []string // FORCE_NULL (cols)
}

// pgEncodings are PostgreSQL's encoding names (pg_encname_tbl, lowercased
// without punctuation), so that a valid but unsupported ENCODING is refused
// by name and an invalid one as PostgreSQL does.
var pgEncodings = map[string]string{
	"utf8": "UTF8", "unicode": "UTF8", "sqlascii": "SQL_ASCII",
	"latin1": "LATIN1", "latin2": "LATIN2", "latin3": "LATIN3", "latin4": "LATIN4",
	"latin5": "LATIN5", "latin6": "LATIN6", "latin7": "LATIN7", "latin8": "LATIN8",
	"latin9": "LATIN9", "latin10": "LATIN10", "win1250": "WIN1250", "win1251": "WIN1251",
	"win1252": "WIN1252", "win1253": "WIN1253", "win1254": "WIN1254", "win1255": "WIN1255",
	"win1256": "WIN1256", "win1257": "WIN1257", "win1258": "WIN1258", "win866": "WIN866",
	"win874": "WIN874", "koi8r": "KOI8R", "koi8u": "KOI8U", "eucjp": "EUC_JP",
	"euccn": "EUC_CN", "euckr": "EUC_KR", "euctw": "EUC_TW", "eucjis2004": "EUC_JIS_2004",
	"sjis": "SJIS", "shiftjis2004": "SHIFT_JIS_2004", "big5": "BIG5", "gbk": "GBK",
	"uhc": "UHC", "gb18030": "GB18030", "johab": "JOHAB", "mulecinternal": "MULE_INTERNAL",
	"iso88595": "ISO_8859_5", "iso88596": "ISO_8859_6", "iso88597": "ISO_8859_7",
	"iso88598": "ISO_8859_8", "iso885915": "LATIN9", "iso88591": "LATIN1",
	"iso88592": "LATIN2", "iso88593": "LATIN3", "iso88594": "LATIN4", "iso88599": "LATIN5",
	"iso885910": "LATIN6", "iso885913": "LATIN7", "iso885914": "LATIN8", "iso885916": "LATIN10",
	"windows1250": "WIN1250", "windows1251": "WIN1251", "windows1252": "WIN1252",
	"windows866": "WIN866", "tcvn": "WIN1258", "alt": "WIN866", "mskanji": "SJIS",
}

// copyOptString is defGetString for a COPY option's argument.
func copyOptString(d *pg.DefElem) (string, bool) {
	if d.Arg == nil {
		return "", false
	}
	switch {
	case d.Arg.GetString_() != nil:
		return d.Arg.GetString_().Sval, true
	case d.Arg.GetBoolean() != nil:
		return strconv.FormatBool(d.Arg.GetBoolean().Boolval), true
	case d.Arg.GetInteger() != nil:
		return strconv.Itoa(int(d.Arg.GetInteger().Ival)), true
	case d.Arg.GetFloat() != nil:
		return d.Arg.GetFloat().Fval, true
	case d.Arg.GetAConst() != nil && d.Arg.GetAConst().GetSval() != nil:
		return d.Arg.GetAConst().GetSval().Sval, true
	}
	return "", false
}

// copyOptStringArg is defGetString, which refuses an option without a value.
func copyOptStringArg(d *pg.DefElem) (string, error) {
	v, ok := copyOptString(d)
	if !ok {
		return "", pgerr.New(pgerr.SyntaxError, "%s requires a parameter", d.Defname)
	}
	return v, nil
}

// copyOptBool is defGetBoolean: no value is true; 0/1, true/false, on/off.
func copyOptBool(d *pg.DefElem) (bool, error) {
	if d.Arg == nil {
		return true, nil
	}
	if i := d.Arg.GetInteger(); i != nil {
		switch i.Ival {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
	}
	if d.Arg.GetInteger() == nil {
		v, _ := copyOptString(d)
		switch strings.ToLower(v) {
		case "true", "on":
			return true, nil
		case "false", "off":
			return false, nil
		}
	}
	return false, pgerr.New(pgerr.SyntaxError, "%s requires a Boolean value", d.Defname)
}

// copyOptColumns reads a list of column names; star reports FORCE_QUOTE *.
func copyOptColumns(d *pg.DefElem, allowStar bool) (cols []string, star bool, err error) {
	if d.Arg != nil {
		if d.Arg.GetAStar() != nil && allowStar {
			return nil, true, nil
		}
		if l := d.Arg.GetList(); l != nil {
			for _, it := range l.Items {
				cols = append(cols, it.GetString_().GetSval())
			}
			return cols, false, nil
		}
	}
	return nil, false, pgerr.New(pgerr.InvalidParameterValue, "argument to option %q must be a list of column names", d.Defname)
}

func parseCopyOptions(opts []*pg.Node, isFrom bool) (copyOptions, error) {
	o := copyOptions{format: "text"}
	seen := map[string]bool{}
	var haveDelim, haveNull, haveQuote, haveEscape, haveForceQuote, haveForceNotNull, haveForceNull bool
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		if seen[d.Defname] {
			return o, pgerr.New(pgerr.SyntaxError, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		var err error
		switch d.Defname {
		case "format":
			var f string
			if f, err = copyOptStringArg(d); err == nil {
				switch f {
				case "text", "csv", "binary":
					o.format = f
				default:
					err = pgerr.New(pgerr.InvalidParameterValue, "COPY format \"%s\" not recognized", f)
				}
			}
		case "freeze":
			o.freeze, err = copyOptBool(d)
		case "delimiter":
			o.delimiter, err = copyOptStringArg(d)
			haveDelim = true
		case "null":
			o.null, err = copyOptStringArg(d)
			haveNull = true
		case "header":
			err = o.parseHeader(d, isFrom)
		case "quote":
			o.quote, err = copyOptStringArg(d)
			haveQuote = true
		case "escape":
			o.escape, err = copyOptStringArg(d)
			haveEscape = true
		case "force_quote":
			o.forceQuote, o.forceQuoteAll, err = copyOptColumns(d, true)
			haveForceQuote = true
		case "force_not_null":
			o.forceNotNull, _, err = copyOptColumns(d, false)
			haveForceNotNull = true
		case "force_null":
			o.forceNull, _, err = copyOptColumns(d, false)
			haveForceNull = true
		case "encoding":
			var v string
			if v, err = copyOptStringArg(d); err == nil {
				err = checkCopyEncoding(v)
			}
		default:
			err = pgerr.New(pgerr.SyntaxError, "option \"%s\" not recognized", d.Defname)
		}
		if err != nil {
			return o, err
		}
	}
	csv, bin := o.format == "csv", o.format == "binary"
	if bin && haveDelim {
		return o, pgerr.New(pgerr.SyntaxError, "cannot specify DELIMITER in BINARY mode")
	}
	if bin && haveNull {
		return o, pgerr.New(pgerr.SyntaxError, "cannot specify NULL in BINARY mode")
	}
	if !haveDelim {
		o.delimiter = "\t"
		if csv {
			o.delimiter = ","
		}
	}
	if !haveNull {
		o.null = `\N`
		if csv {
			o.null = ""
		}
	}
	if csv && !haveQuote {
		o.quote = `"`
	}
	if csv && !haveEscape {
		o.escape = o.quote
	}
	if !bin {
		if len(o.delimiter) != 1 {
			return o, pgerr.New(pgerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		if strings.ContainsAny(o.delimiter, "\r\n") {
			return o, pgerr.New(pgerr.InvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
		}
		if strings.ContainsAny(o.null, "\r\n") {
			return o, pgerr.New(pgerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
		}
		if !csv && strings.Contains(`\.abcdefghijklmnopqrstuvwxyz0123456789`, o.delimiter) {
			return o, pgerr.New(pgerr.InvalidParameterValue, "COPY delimiter cannot be \"%s\"", o.delimiter)
		}
	}
	if bin && o.header {
		return o, pgerr.New(pgerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
	}
	if !csv && haveQuote {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY quote available only in CSV mode")
	}
	if csv && len(o.quote) != 1 {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY quote must be a single one-byte character")
	}
	if csv && o.delimiter == o.quote {
		return o, pgerr.New(pgerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if !csv && haveEscape {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY escape available only in CSV mode")
	}
	if csv && len(o.escape) != 1 {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY escape must be a single one-byte character")
	}
	if !csv && haveForceQuote {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force quote available only in CSV mode")
	}
	if haveForceQuote && isFrom {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force quote only available using COPY TO")
	}
	if !csv && haveForceNotNull {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force not null available only in CSV mode")
	}
	if haveForceNotNull && !isFrom {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force not null only available using COPY FROM")
	}
	if !csv && haveForceNull {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force null available only in CSV mode")
	}
	if haveForceNull && !isFrom {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY force null only available using COPY FROM")
	}
	if !bin && strings.Contains(o.null, o.delimiter) {
		return o, pgerr.New(pgerr.FeatureNotSupported, "COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.Contains(o.null, o.quote) {
		return o, pgerr.New(pgerr.FeatureNotSupported, "CSV quote character must not appear in the NULL specification")
	}
	return o, nil
}

// parseHeader is defGetCopyHeaderChoice: a Boolean, or "match" (COPY FROM).
func (o *copyOptions) parseHeader(d *pg.DefElem, isFrom bool) error {
	if d.Arg == nil {
		o.header = true
		return nil
	}
	if i := d.Arg.GetInteger(); i != nil {
		if i.Ival == 0 || i.Ival == 1 {
			o.header = i.Ival == 1
			return nil
		}
	} else {
		v, _ := copyOptString(d)
		switch strings.ToLower(v) {
		case "true", "on":
			o.header = true
			return nil
		case "false", "off":
			return nil
		case "match":
			if !isFrom {
				return pgerr.New(pgerr.FeatureNotSupported, "cannot use \"%s\" with HEADER in COPY TO", v)
			}
			o.header, o.headerMatch = true, true
			return nil
		}
	}
	return pgerr.New(pgerr.SyntaxError, "%s requires a Boolean value or \"match\"", d.Defname)
}

// checkCopyEncoding accepts the server's encoding (UTF8; SQL_ASCII, which
// converts nothing) and refuses the others by name.
func checkCopyEncoding(v string) error {
	key := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, v)
	name, ok := pgEncodings[key]
	if !ok {
		return pgerr.New(pgerr.InvalidParameterValue, "argument to option \"encoding\" must be a valid encoding name")
	}
	if name != "UTF8" && name != "SQL_ASCII" {
		return pgerr.New(pgerr.FeatureNotSupported, "COPY ENCODING %q is not supported: data is converted only to and from UTF8", name)
	}
	return nil
}
