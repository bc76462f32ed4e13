// Package doctabletest is the test side of package doctable: a test
// holds a doc's generated regions to the tables its package renders
// (Sync, rewritten under the test flag -update) and the package's table
// of bounds to its source (CoverSource).
package doctabletest

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

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

// Sync holds doc's regions to their tables. A region that differs fails
// the test with the fresh table; under -update the doc is rewritten
// instead, under an exclusive lock on it (packages that share a doc may
// run their tests at once).
func Sync(t testing.TB, doc string, regions ...Region) {
	t.Helper()
	flags := os.O_RDONLY
	if *update {
		flags = os.O_RDWR
	}
	f, err := os.OpenFile(doc, flags, 0)
	require.NoError(t, err)
	defer f.Close()
	if *update {
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	}
	raw, err := io.ReadAll(f)
	require.NoError(t, err)
	text := string(raw)
	for _, r := range regions {
		next, old, err := doctable.Replace(text, r.Name, r.Command, r.Table)
		require.NoError(t, err, doc)
		if old != r.Table && !*update {
			t.Errorf("%s: the %q table differs from the code; run `%s`, or paste:\n%s", doc, r.Name, r.Command, r.Table)
		}
		text = next
	}
	if !*update || text == string(raw) {
		return
	}
	require.NoError(t, f.Truncate(0))
	_, err = f.WriteAt([]byte(text), 0)
	require.NoError(t, err)
}

// IsBoundName reports whether a constant's name makes it a bound that
// needs a row: max* and Max*, or *Max.
func IsBoundName(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "max") || strings.HasSuffix(name, "Max")
}

// CoverSource holds rows, the package's table declared as the variable
// tableVar in the package in the current directory, to the package's
// source: a row for every constant IsBoundName accepts and for every
// constant declared in the files allConstsIn, no row for anything else,
// each once, and each row's Value the very constant its Name says.
func CoverSource(t testing.TB, tableVar string, rows []doctable.Bound, allConstsIn ...string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	want := map[string]string{} // constant -> file
	var table *ast.CompositeLit
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
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
					if gd.Tok == token.CONST && (IsBoundName(id.Name) || contains(allConstsIn, path)) {
						want[id.Name] = path
					}
					if gd.Tok == token.VAR && id.Name == tableVar && i < len(vs.Values) {
						table, _ = vs.Values[i].(*ast.CompositeLit)
					}
				}
			}
		}
	}
	require.NotNil(t, table, "the package declares var %s = []bound{...}", tableVar)
	require.Len(t, table.Elts, len(rows), "%s's literal and its value", tableVar)
	seen := map[string]bool{}
	for i, e := range table.Elts {
		row, ok := e.(*ast.CompositeLit)
		require.True(t, ok, "%s[%d] is a literal", tableVar, i)
		id := valueIdent(row)
		require.NotNil(t, id, "%s[%d]'s Value is a constant's name", tableVar, i)
		name := rows[i].Name
		require.Equal(t, name, id.Name, "%s[%d]'s Name is the constant its Value is", tableVar, i)
		_, declared := want[name]
		require.True(t, declared, "%s names %s, which is no bound constant of the package", tableVar, name)
		require.False(t, seen[name], "%s is listed twice", name)
		seen[name] = true
		require.NotEmpty(t, rows[i].Protects, name)
	}
	var missing []string
	for name, file := range want {
		if !seen[name] {
			missing = append(missing, name+" ("+file+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "bound constants without a row in %s (and so in the doc)", tableVar)
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
