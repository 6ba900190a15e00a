package catalog

import "testing"

// TestSystemRelationOIDsUnique guards against two system relations added on
// separate branches taking the same OID (streamsql_sources and
// streamsql_sinks once did): byOID would keep only one of them.
func TestSystemRelationOIDsUnique(t *testing.T) {
	seen := map[uint32]string{}
	for _, d := range append(append([]sysDef(nil), pgCatalogDefs...), infoSchemaDefs...) {
		name := d.schema + "." + d.name
		if other, ok := seen[d.oid]; ok {
			t.Errorf("OID %d is taken by both %s and %s", d.oid, other, name)
		}
		seen[d.oid] = name
	}
}
