//go:build !unix

package control

import "time"

func processCPU() time.Duration { return 0 }
