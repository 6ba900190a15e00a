package pgerr

import (
	"context"
	"errors"
	"fmt"
)

// Code is a five-character SQLSTATE.
type Code string

// SQLSTATE codes used by streamsql (names as in PostgreSQL's errcodes.txt).
const (
	SuccessfulCompletion Code = "00000"
	Warning              Code = "01000"

	FeatureNotSupported           Code = "0A000"
	InvalidTransactionState       Code = "25000"
	ActiveSQLTransaction          Code = "25001"
	NoActiveSQLTransaction        Code = "25P01"
	InFailedSQLTransaction        Code = "25P02"
	ReadOnlySQLTransaction        Code = "25006"
	InvalidSQLStatementName       Code = "26000"
	InvalidCursorName             Code = "34000"
	InvalidCursorState            Code = "24000"
	QueryCanceled                 Code = "57014"
	AdminShutdown                 Code = "57P01"
	ProtocolViolation             Code = "08P01"
	ConnectionException           Code = "08000"
	TooManyConnections            Code = "53300"
	InvalidAuthorizationSpec      Code = "28000"
	InvalidPassword               Code = "28P01"
	InvalidParameterValue         Code = "22023"
	CardinalityViolation          Code = "21000"
	DataException                 Code = "22000"
	ArraySubscriptError           Code = "2202E"
	CharacterNotInRepertoire      Code = "22021"
	DatetimeFieldOverflow         Code = "22008"
	DivisionByZero                Code = "22012"
	InvalidDatetimeFormat         Code = "22007"
	InvalidTextRepresentation     Code = "22P02"
	InvalidBinaryRepresentation   Code = "22P03"
	InvalidEscapeSequence         Code = "22025"
	InvalidUseOfEscapeCharacter   Code = "2200C"
	InvalidRegularExpression      Code = "2201B"
	InvalidParameterType          Code = "22023"
	NumericValueOutOfRange        Code = "22003"
	StringDataRightTruncation     Code = "22001"
	NullValueNotAllowed           Code = "22004"
	InvalidArgumentForLog         Code = "2201E"
	InvalidArgumentForPower       Code = "2201F"
	InvalidArgumentForWidthBucket Code = "2201G"
	InvalidRowCountInLimit        Code = "2201W"
	InvalidRowCountInOffset       Code = "2201X"
	UntranslatableCharacter       Code = "22P05"
	InvalidJSONText               Code = "22P02"
	IntegrityConstraintViolation  Code = "23000"
	NotNullViolation              Code = "23502"
	ForeignKeyViolation           Code = "23503"
	UniqueViolation               Code = "23505"
	CheckViolation                Code = "23514"

	SyntaxErrorOrAccessRuleViolation Code = "42000"
	SyntaxError                      Code = "42601"
	InsufficientPrivilege            Code = "42501"
	UndefinedColumn                  Code = "42703"
	UndefinedFunction                Code = "42883"
	UndefinedTable                   Code = "42P01"
	UndefinedParameter               Code = "42P02"
	UndefinedObject                  Code = "42704"
	UndefinedSchema                  Code = "3F000"
	DuplicateColumn                  Code = "42701"
	DuplicateCursor                  Code = "42P03"
	DuplicateDatabase                Code = "42P04"
	DuplicatePreparedStatement       Code = "42P05"
	DuplicateSchema                  Code = "42P06"
	DuplicateTable                   Code = "42P07"
	DuplicateAlias                   Code = "42712"
	DuplicateObject                  Code = "42710"
	AmbiguousColumn                  Code = "42702"
	AmbiguousFunction                Code = "42725"
	AmbiguousParameter               Code = "42P08"
	DatatypeMismatch                 Code = "42804"
	WrongObjectType                  Code = "42809"
	InvalidColumnReference           Code = "42P10"
	InvalidColumnDefinition          Code = "42611"
	InvalidTableDefinition           Code = "42P16"
	InvalidObjectDefinition          Code = "42P17"
	InvalidForeignKey                Code = "42830"
	GroupingError                    Code = "42803"
	WindowingError                   Code = "42P20"
	InvalidRecursion                 Code = "42P19"
	CannotCoerce                     Code = "42846"
	IndeterminateDatatype            Code = "42P18"
	TooManyColumns                   Code = "54011"
	StatementTooComplex              Code = "54001"
	DependentObjectsStillExist       Code = "2BP01"
	ObjectNotInPrerequisiteState     Code = "55000"
	ProgramLimitExceeded             Code = "54000"
	OutOfMemory                      Code = "53200"
	DiskFull                         Code = "53100"
	ConfigurationLimitExceeded       Code = "53400"
	BadCopyFileFormat                Code = "22P04"
	InternalError                    Code = "XX000"
	DataCorrupted                    Code = "XX001"
	IOError                          Code = "58030"
	UndefinedFile                    Code = "58P01"
	InvalidCatalogName               Code = "3D000"
	InvalidSchemaName                Code = "3F000"
	CantChangeRuntimeParam           Code = "55P02"
	LockNotAvailable                 Code = "55P03"
	UndefinedParameterName           Code = "42704"
)

// Severity of an error or notice, as sent in the 'S' and 'V' fields.
type Severity string

// Severities.
const (
	SevError   Severity = "ERROR"
	SevFatal   Severity = "FATAL"
	SevWarning Severity = "WARNING"
	SevNotice  Severity = "NOTICE"
	SevInfo    Severity = "INFO"
)

// Error is a user-facing error with a SQLSTATE.
type Error struct {
	Code     Code
	Severity Severity // empty means ERROR
	Message  string
	Detail   string
	Hint     string
	// Position is the 1-based character (not byte) offset into the statement
	// text that the error points at; 0 means none.
	Position int
	// Where is the CONTEXT line (PostgreSQL's "SQL function ... statement
	// 1" and the like); empty means none.
	Where string
	// Cause is an optional underlying error kept for logs and errors.Is.
	Cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// New makes an error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns a copy of e with a hint.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// WithDetail returns a copy of e with a detail.
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = fmt.Sprintf(format, args...)
	return &c
}

// WithWhere returns a copy of e with a CONTEXT line.
func (e *Error) WithWhere(format string, args ...any) *Error {
	c := *e
	c.Where = fmt.Sprintf(format, args...)
	return &c
}

// WithPosition returns a copy of e pointing at a 1-based character position.
func (e *Error) WithPosition(pos int) *Error {
	c := *e
	c.Position = pos
	return &c
}

// Wrap makes a user-facing error from cause, keeping cause for errors.Is.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Canceled is the 57014 error of a statement whose context ended with
// cause (its ctx.Err()): "due to statement timeout" when its deadline
// passed (statement_timeout), "due to user request" otherwise (a cancel
// request, the connection's end).
func Canceled(cause error) *Error {
	if errors.Is(cause, context.DeadlineExceeded) {
		return Wrap(cause, QueryCanceled, "canceling statement due to statement timeout")
	}
	return Wrap(cause, QueryCanceled, "canceling statement due to user request")
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the SQLSTATE of err: its *Error's code, or XX000.
func CodeOf(err error) Code {
	if e := As(err); e != nil {
		return e.Code
	}
	return InternalError
}

// Frequent constructors.

// Unsupported reports a feature streamsql does not have (0A000).
func Unsupported(format string, args ...any) *Error {
	return New(FeatureNotSupported, format, args...)
}

// Internal reports a bug (XX000).
func Internal(format string, args ...any) *Error {
	return New(InternalError, format, args...)
}

// SequenceGeneratorLimitExceeded is 2200H: nextval beyond a sequence's bounds.
const SequenceGeneratorLimitExceeded Code = "2200H"

// GeneratedAlways is 428C9: a value given for a GENERATED ALWAYS column.
const GeneratedAlways Code = "428C9"
