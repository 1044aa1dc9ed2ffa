//go:build tools

// Package kgo pins the suite's package so that `go mod tidy` keeps franz-go (and what its tests import) in go.sum.
package kgo

import _ "github.com/twmb/franz-go/pkg/kgo"
