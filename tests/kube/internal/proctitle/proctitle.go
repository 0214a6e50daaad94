// Package proctitle hides the double's arguments as k3s hides its own.
//
// k3s's server and agent call gspt.SetProcTitle(os.Args[0] + " server")
// (" agent") first thing (pkg/cli/server/server.go, pkg/cli/agent/agent.go;
// RKE2 runs the same code): the whole argv area the kernel gave the process
// is overwritten, so /proc/<pid>/cmdline reads as that one string followed by
// NUL bytes, never the flags or a token. The double does the same without
// cgo: Go's os.Args strings point into that area (runtime.goargs copies
// nothing), so it is written through them.
package proctitle

import (
	"os"
	"strings"
	"unsafe"
)

// area is the argv area as the kernel laid it out (every argument and the NUL
// after it, the last NUL left out); nil when it could not be found whole.
// environ is the environment area right after it, which gspt's first title
// zeroes too (SPT.end covers both): /proc/<pid>/environ of a running k3s
// reads NUL bytes only. nil when it is not where and what os.Environ says.
var area, environ []byte

// Save records the argv area and gives os.Args copies of their strings, so
// that a later Set leaves every string of the program intact. It runs first
// in main, before anything keeps a string of os.Args.
func Save() {
	if len(os.Args) == 0 || len(os.Args[0]) == 0 {
		return
	}
	first := unsafe.StringData(os.Args[0])
	base := uintptr(unsafe.Pointer(first))
	next := base
	for _, a := range os.Args {
		if len(a) > 0 && uintptr(unsafe.Pointer(unsafe.StringData(a))) != next {
			return // not one contiguous area: leave the title alone
		}
		next += uintptr(len(a)) + 1
	}
	area = unsafe.Slice(first, int(next-base)-1)
	environ = findEnviron(unsafe.Add(unsafe.Pointer(first), int(next-base)))
	for i, a := range os.Args {
		os.Args[i] = strings.Clone(a)
	}
}

// findEnviron is the environment area starting at p, when the bytes there are
// os.Environ's strings (the runtime keeps copies of them) each with its NUL,
// in order; nil otherwise.
func findEnviron(p unsafe.Pointer) []byte {
	env := os.Environ()
	size := 0
	for _, e := range env {
		size += len(e) + 1
	}
	if size == 0 {
		return nil
	}
	region := unsafe.Slice((*byte)(p), size)
	at := 0
	for _, e := range env {
		if string(region[at:at+len(e)]) != e || region[at+len(e)] != 0 {
			return nil
		}
		at += len(e) + 1
	}
	return region[:size-1]
}

// Set writes title over the argv area (cut to its size) and zeroes the rest
// and the environment area, as gspt's first call does: /proc/<pid>/cmdline
// then holds title and NUL bytes only, /proc/<pid>/environ NUL bytes only.
// The program's own environment (os.Getenv) is the runtime's copy: unchanged.
func Set(title string) {
	if area == nil {
		return
	}
	n := copy(area, title)
	clear(area[n:])
	clear(environ)
}

// Hidden is what a k3s server or agent shows: argv[0], a space, the subcommand.
func Hidden(subcommand string) string {
	return os.Args[0] + " " + subcommand
}
