package engine

import "golang.org/x/sys/unix"

// throughLinkResolve is throughLink in one openat2 call (Linux 5.6 and
// later): an O_PATH open with RESOLVE_NO_SYMLINKS fails with ELOOP at the
// first symbolic link of p, trailing component included, and with ENOENT
// at the first component that does not exist. ok is false when the
// kernel (or a seccomp filter) refuses openat2; the caller then walks
// the components.
func throughLinkResolve(p string) (link, ok bool) {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	switch err {
	case nil:
		unix.Close(fd)
		return false, true
	case unix.ENOENT:
		return false, true
	case unix.ENOSYS, unix.EPERM, unix.EINVAL, unix.E2BIG:
		return false, false
	case unix.EINTR, unix.EAGAIN:
		return false, false
	}
	// ELOOP (a link), ENOTDIR, EACCES, ...: a component is a link or
	// cannot be examined.
	return true, true
}
