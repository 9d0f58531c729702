package chat

import (
	"testing"

	"github.com/teamchat/chat/storage/bunstore"
)

// Every migration after the export format's first schema says how an
// archive made before it is converted (nil: it needs nothing), so that an
// older archive is converted or refused on purpose, never misread.
func TestSchemaConversionsCoverMigrations(t *testing.T) {
	_, latest := bunstore.LatestSchemaVersion()
	for n := formatFirstSchema + 1; n <= latest; n++ {
		if _, ok := schemaConversions[n]; !ok {
			t.Errorf("migration %04d has no entry in schemaConversions (import.go): say how an archive of schema %d converts (nil when its records need no change)", n, n-1)
		}
	}
}
