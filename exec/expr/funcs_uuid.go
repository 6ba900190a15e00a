package expr

import "github.com/streamsql/streamsql/types"

// uuid functions. The type itself (input, output, binary form, order) is
// types.UUID's; equality and ordering are its text's (types/uuid.go).
func init() {
	define(
		// gen_random_uuid() is PostgreSQL 13's built-in version 4 uuid.
		fn0("gen_random_uuid", types.TUUID, true, func(*Context) (types.Value, error) { return types.RandomUUID(), nil }),
	)
}
