package main

import (
	"github.com/stretchr/testify/require"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: --version prints the module version and the VCS revision
// from the build information, and says so when none was recorded (there
// was no --version before).
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/bloomwatch/bloomwatch", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "15eb73b484fb720d78614c251b9cd9e52dfade4d"},
			{Key: "vcs.time", Value: "2026-11-28T02:07:53Z"}, {Key: "vcs.modified", Value: "true"}}}
	got, want := version(bi, true), "v0.3.0 revision 15eb73b484fb720d78614c251b9cd9e52dfade4d (modified) of 2026-11-28T02:07:53Z, go1.26.8"
	require.Equal(t, want, got, "version %q, want %q", got, want)
	dev := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	got = version(dev, true)
	require.True(t, strings.HasPrefix(got, "(devel) revision unknown (no VCS revision recorded"), "devel version %q", got)
	revision = "0123abc"
	got = version(dev, true)
	revision = ""
	require.True(t, strings.HasPrefix(got, "(devel) revision 0123abc (stamped at link time)"), "stamped version %q", got)
	got = version(nil, false)
	require.Contains(t, got, "no build information", "no build info: %q", got)
	code, out, errOut := runCLI(t, []string{"--version"})
	require.Equal(t, 0, code, "--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Equal(t, "", errOut, "--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.True(t, strings.HasPrefix(out, "bloomwatch "), "--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Equal(t, 1, strings.Count(out, "\n"), "--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	bi, ok := debug.ReadBuildInfo()
	want = version(bi, ok)
	require.Equal(t, "bloomwatch "+want+"\n", out, "--version %q, want %q", out, want)
}

// TestErrorLinesNameTheCommand: every bad-input line starts with
// "bloomwatch: " and the command's name (a bad hex element of filter build
// printed "bloomwatch: element 1: bad hex" before).
func TestErrorLinesNameTheCommand(t *testing.T) {
	fx := newBadFixture(t)
	root := newRootCmd()
	for _, tc := range fx.badCases() {
		cmd, _, err := root.Find(tc.args)
		if err != nil || !cmd.HasParent() {
			continue // an unknown command of the root names none
		}
		name := strings.TrimPrefix(cmd.CommandPath(), "bloomwatch ")
		t.Run(tc.name, func(t *testing.T) {
			_, _, errOut := runCLI(t, tc.args)
			require.True(t, strings.HasPrefix(errOut, "bloomwatch: "+name+": "), "stderr %q does not start with %q", errOut, "bloomwatch: "+name+": ")
		})
	}
}

// TestVersionStampedBuild builds the binary without VCS stamping and with
// the revision given to the linker, as a build outside a git clone does,
// and reads it back from --version.
func TestVersionStampedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "bloomwatch")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.revision=feedc0de", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build: %v\n%s", err, out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err, "--version: %q", out)
	require.Contains(t, string(out), "revision feedc0de (stamped at link time)", "--version: %q, %v", out, err)
}
