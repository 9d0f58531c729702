package storagetest_test

import (
	"testing"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
	"github.com/teamchat/chat/storage/storagetest"
)

// A backend runs the suite from a test of its own: open gives each subtest
// a fresh, empty store and closes it when the subtest ends (t.Cleanup).
// Here the backend is bunstore's SQLite store, as in bunstore's TestSQLite;
// a new backend opens its own.
//
// This Example is compiled but not run: Run needs a test's *testing.T,
// which only go test makes, and the suite takes seconds (bunstore's
// TestSQLite and TestPostgres run it on both databases).
func ExampleRun() {
	// In a _test.go file of the backend's package:
	testStore := func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			return bunstore.OpenTestSQLite(t)
		})
	}
	_ = testStore
}
