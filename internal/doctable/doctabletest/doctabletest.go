// Package doctabletest is the test side of package doctable: a test
// holds a doc's generated regions to the tables its package renders
// (Sync, rewritten under the test flag -update) and the package's table
// of bounds to its source (CoverSource); Check does both for a package's
// table in docs/RELIABILITY.md.
package doctabletest

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
)

// update makes Sync rewrite the doc's regions instead of failing on a
// difference.
var update = flag.Bool("update", false, "rewrite the generated tables of the docs")

// Region is one generated region of a doc: its name, the command that
// regenerates it (both in its markers) and the table it holds.
type Region struct {
	Name    string
	Command string
	Table   string
}

// Reliability is the doc the packages' bounds tables are generated into,
// from the module's root.
const Reliability = "docs/RELIABILITY.md"

// Check is a package's bounds-table test: rows, its table declared as the
// variable bounds, are held to the package's source (CoverSource) and,
// rendered with the package's name as prefix (none for a command), to the
// region "PKG bounds" of docs/RELIABILITY.md. pkg is the package's
// directory from the module's root (the test runs in it); the region's
// marker names the command that regenerates it, the test t with -update.
func Check(t *testing.T, pkg string, rows []doctable.Bound) {
	t.Helper()
	CoverSource(t, "bounds", rows)
	prefix := filepath.Base(pkg) + "."
	if strings.HasPrefix(pkg, "cmd/") {
		prefix = ""
	}
	table, err := doctable.Render(prefix, rows)
	if err != nil {
		t.Fatal(err)
	}
	up := strings.Repeat("../", strings.Count(pkg, "/")+1)
	Sync(t, up+Reliability, Region{
		Name:    pkg + " bounds",
		Command: "go test ./" + pkg + " -run " + t.Name() + " -update",
		Table:   table,
	})
}

// Sync holds doc's regions to their tables. A region that differs fails
// the test with the fresh table; under -update the doc is rewritten
// instead, under an exclusive lock on it (packages that share a doc may
// run their tests at once).
func Sync(t testing.TB, doc string, regions ...Region) {
	t.Helper()
	stale, err := syncDoc(doc, regions, *update)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range stale {
		t.Errorf("%s: the %q table differs from the code; run `%s`, or paste:\n%s", doc, r.Name, r.Command, r.Table)
	}
}

// syncDoc returns the regions of doc that differ from their tables,
// after rewriting them when rewrite is set (then none is returned).
func syncDoc(doc string, regions []Region, rewrite bool) ([]Region, error) {
	flags := os.O_RDONLY
	if rewrite {
		flags = os.O_RDWR
	}
	f, err := os.OpenFile(doc, flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if rewrite {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return nil, fmt.Errorf("lock %s: %w", doc, err)
		}
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	text := string(raw)
	var stale []Region
	for _, r := range regions {
		next, old, err := doctable.Replace(text, r.Name, r.Command, r.Table)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc, err)
		}
		if old != r.Table && !rewrite {
			stale = append(stale, r)
		}
		text = next
	}
	if !rewrite || text == string(raw) {
		return stale, nil
	}
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	_, err = f.WriteAt([]byte(text), 0)
	return nil, err
}

// IsBoundName reports whether a constant's name makes it a bound that
// needs a row: max* and Max*, or *Max.
func IsBoundName(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "max") || strings.HasSuffix(name, "Max")
}

// CoverSource holds rows, the package's table declared as the variable
// tableVar in the package in the current directory (in a test file, as
// only the test reads it), to the package's non-test source: a row for every constant IsBoundName accepts and for every
// constant declared in the files allConstsIn, no row for anything else,
// each once, and each row's Value the very constant its Name says.
func CoverSource(t testing.TB, tableVar string, rows []doctable.Bound, allConstsIn ...string) {
	t.Helper()
	if err := coverage(".", tableVar, rows, allConstsIn); err != nil {
		t.Fatal(err)
	}
}

// coverage is CoverSource for the package in dir.
func coverage(dir, tableVar string, rows []doctable.Bound, allConstsIn []string) error {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	want := map[string]string{} // constant -> file
	var table *ast.CompositeLit
	for _, path := range files {
		test := strings.HasSuffix(path, "_test.go")
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		base := filepath.Base(path)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, id := range vs.Names {
					if !test && gd.Tok == token.CONST && (IsBoundName(id.Name) || slices.Contains(allConstsIn, base)) {
						want[id.Name] = base
					}
					if gd.Tok == token.VAR && id.Name == tableVar && i < len(vs.Values) {
						table, _ = vs.Values[i].(*ast.CompositeLit)
					}
				}
			}
		}
	}
	if table == nil {
		return fmt.Errorf("the package declares no var %s = []doctable.Bound{...}", tableVar)
	}
	if len(table.Elts) != len(rows) {
		return fmt.Errorf("%s's literal has %d rows, its value %d", tableVar, len(table.Elts), len(rows))
	}
	var errs []error
	seen := map[string]bool{}
	for i, e := range table.Elts {
		row, ok := e.(*ast.CompositeLit)
		if !ok {
			return fmt.Errorf("%s[%d] is not a literal", tableVar, i)
		}
		id := valueIdent(row)
		name := rows[i].Name
		switch _, declared := want[name]; {
		case id == nil:
			errs = append(errs, fmt.Errorf("%s[%d]'s Value is not a constant's name", tableVar, i))
		case id.Name != name:
			errs = append(errs, fmt.Errorf("%s[%d] is named %s but its Value is %s", tableVar, i, name, id.Name))
		case !declared:
			errs = append(errs, fmt.Errorf("%s names %s, which is no bound constant of the package", tableVar, name))
		case seen[name]:
			errs = append(errs, fmt.Errorf("%s lists %s twice", tableVar, name))
		case rows[i].Protects == "":
			errs = append(errs, fmt.Errorf("%s's row of %s says nothing of what it protects", tableVar, name))
		}
		seen[name] = true
	}
	var missing []string
	for name, file := range want {
		if !seen[name] {
			missing = append(missing, name+" ("+file+")")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		errs = append(errs, fmt.Errorf("bound constants without a row in %s (and so in the doc): %s", tableVar, strings.Join(missing, ", ")))
	}
	return errors.Join(errs...)
}

// valueIdent returns the identifier a row literal gives as its Value,
// positional or keyed, or nil.
func valueIdent(row *ast.CompositeLit) *ast.Ident {
	for i, e := range row.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Value" {
				id, _ := kv.Value.(*ast.Ident)
				return id
			}
			continue
		}
		if i == 1 {
			id, _ := e.(*ast.Ident)
			return id
		}
	}
	return nil
}
