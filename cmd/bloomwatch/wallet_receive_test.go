package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalletReceive hands out receive addresses through the CLI: each
// call gives the next index, the third is refused past a gap limit of 2
// with one line and exit 2, --beyond-gap gives it, and `wallet addresses
// --unused` lists the handed-out ones as such, and no used address.
func TestWalletReceive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	if code, _, errOut := runCLI(t, createArgs(dir, "--gap-external", "2")); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	var got []string
	for i := range 2 {
		code, out, errOut := runCLI(t, []string{"wallet", "receive", "--datadir", dir, "--json"})
		if code != 0 {
			t.Fatalf("receive %d: exit %d: %s", i, code, errOut)
		}
		var info struct {
			Address string `json:"address"`
			Index   uint32 `json:"index"`
			From    string `json:"from"`
		}
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			t.Fatal(err)
		}
		if info.Index != uint32(i) || info.From != "m/84'/1'/0" {
			t.Fatalf("receive %d: %+v", i, info)
		}
		got = append(got, info.Address)
	}
	code, out, errOut := runCLI(t, []string{"wallet", "receive", "--datadir", dir})
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "past the gap limit of 2") {
		t.Fatalf("third receive: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, []string{"wallet", "receive", "--datadir", dir, "--beyond-gap"})
	if code != 0 || !strings.Contains(out, "index 2 of m/84'/1'/0") || !strings.Contains(out, "past the gap limit of 2") {
		t.Fatalf("--beyond-gap: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got = append(got, strings.Fields(out)[0])
	code, out, errOut = runCLI(t, []string{"wallet", "addresses", "--datadir", dir, "--unused"})
	if code != 0 {
		t.Fatalf("addresses --unused: %s", errOut)
	}
	for _, a := range got {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, a) {
				line = l
			}
		}
		if !strings.Contains(line, "handed out") {
			t.Errorf("%s not listed as handed out: %q", a, line)
		}
	}
	if strings.Contains(out, " true ") {
		t.Errorf("--unused lists a used address:\n%s", out)
	}
}
