package chat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritesReadThroughTheirTransaction holds the write path's rule that
// inside a write every read goes through the transaction: no function
// given to the write path (a func(w *writeTx) error literal) reads the
// Service's store or its shared reads. Reads a write needs go through w
// (the store) or w.reads(); what must be read outside the transaction is
// read before the write starts.
func TestWritesReadThroughTheirTransaction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	closures := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.FuncLit)
			if !ok || !isWriteFunc(lit.Type) {
				return true
			}
			closures++
			ast.Inspect(lit.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "s" && (sel.Sel.Name == "store" || sel.Sel.Name == "reads") {
					t.Errorf("%s: a write reads s.%s instead of its transaction", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
			return true
		})
	}
	if closures < 50 {
		t.Fatalf("found %d write functions: the check no longer finds them", closures)
	}
}

// isWriteFunc says whether a function type is func(w *writeTx) error.
func isWriteFunc(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 || ft.Results == nil || len(ft.Results.List) != 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "writeTx"
}
