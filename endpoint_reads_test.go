package chat

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"testing"
)

// storeMachinery are the exported methods of *Service that may use the
// Service's store directly, each for a reason of machinery: the store as
// a whole, not a rule's read.
var storeMachinery = map[string]string{
	"Close":          "closes the store the Service was given",
	"Ready":          "asks the store itself whether it can answer (the readiness probe)",
	"ExportRealm":    "streams an organization from one read snapshot of the store, in the export format",
	"HandOverEvents": "saves this server's event queues in the store and leaves the fleet's registry",
}

// TestEndpointsReadThroughReads holds the shape of the Service's
// methods: an exported method (an endpoint, or an entry point of the
// host) reads through reads (s.reads(), w.reads() in a write, or a
// snapshot's), never the Service's store, except the machinery listed
// in storeMachinery.
func TestEndpointsReadThroughReads(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods, seen := 0, map[string]bool{}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !fd.Name.IsExported() {
				continue
			}
			recv := serviceReceiver(fd)
			if recv == "" {
				continue
			}
			methods++
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "store" {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == recv {
					if _, ok := storeMachinery[fd.Name.Name]; ok {
						seen[fd.Name.Name] = true
					} else {
						t.Errorf("%s: %s reads %s.store: read through %s.reads() (or w.reads() in a write)",
							fset.Position(sel.Pos()), fd.Name.Name, recv, recv)
					}
				}
				return true
			})
		}
	}
	if methods < 100 {
		t.Fatalf("found %d exported methods of *Service: the check no longer finds them", methods)
	}
	for name := range storeMachinery {
		if !seen[name] {
			t.Errorf("storeMachinery lists %s, which no longer uses the store directly: take it off the list", name)
		}
	}
}

// serviceReceiver is the name of a method's *Service receiver, or ""
// when it is no method of *Service.
func serviceReceiver(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || len(fd.Recv.List[0].Names) != 1 {
		return ""
	}
	star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return ""
	}
	if id, ok := star.X.(*ast.Ident); !ok || id.Name != "Service" {
		return ""
	}
	return fd.Recv.List[0].Names[0].Name
}
