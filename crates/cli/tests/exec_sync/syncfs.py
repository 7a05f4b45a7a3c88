"""A pass-through FUSE file system whose fsync is slow or fails, for cordon's audit-sync tests.

    syncfs.py BACKING MOUNTPOINT CONTROL

Every operation goes to the same path under BACKING, except fsync/fdatasync, which first reads
CONTROL: `fail [NAME]` answers EIO (the record cannot be made durable), `slow SECONDS [NAME]`
sleeps that long before syncing the backing file, anything else syncs at once; with NAME, only
for files of that name. Each fsync appends a line `fsync NAME START END RESULT` (monotonic
seconds) to CONTROL.log, so a test can tell which syncs ran, when, and how they ended. Runs in the foreground until unmounted; the mount is `allow_other`, so a
test can run cordon as another user on it. Needs mfusepy (scripts/test-deps.sh) and libfuse3.
"""

import errno
import os
import sys
import time

from mfusepy import FUSE, FuseOSError, Operations


class SyncFs(Operations):
    use_ns = True

    def __init__(self, backing, control):
        self.backing = backing
        self.control = control

    def _p(self, path):
        return os.path.join(self.backing, path.lstrip("/"))

    def _call(self, f, *args, **kwargs):
        try:
            return f(*args, **kwargs)
        except OSError as e:
            raise FuseOSError(e.errno or errno.EIO)

    def access(self, path, mode):
        if not os.access(self._p(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        return self._call(os.chmod, self._p(path), mode)

    def chown(self, path, uid, gid):
        return self._call(os.lchown, self._p(path), uid, gid)

    def getattr(self, path, fh=None):
        st = self._call(os.lstat, self._p(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink",
                "st_size", "st_uid", "st_ino", "st_dev", "st_blocks", "st_blksize")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + self._call(os.listdir, self._p(path))

    def readlink(self, path):
        return self._call(os.readlink, self._p(path))

    def mknod(self, path, mode, dev):
        return self._call(os.mknod, self._p(path), mode, dev)

    def rmdir(self, path):
        return self._call(os.rmdir, self._p(path))

    def mkdir(self, path, mode):
        return self._call(os.mkdir, self._p(path), mode)

    def statfs(self, path):
        st = self._call(os.statvfs, self._p(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree",
                "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(st, k) for k in keys}

    def unlink(self, path):
        return self._call(os.unlink, self._p(path))

    def symlink(self, target, source):
        return self._call(os.symlink, source, self._p(target))

    def rename(self, old, new):
        return self._call(os.rename, self._p(old), self._p(new))

    def link(self, target, source):
        return self._call(os.link, self._p(source), self._p(target))

    def utimens(self, path, times=None):
        return self._call(os.utime, self._p(path), ns=times, follow_symlinks=False)

    def open(self, path, flags):
        return self._call(os.open, self._p(path), flags)

    def create(self, path, mode, fi=None):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if fi is not None and hasattr(fi, "flags"):
            flags = fi.flags | os.O_CREAT
        return self._call(os.open, self._p(path), flags, mode)

    def read(self, path, length, offset, fh):
        return self._call(os.pread, fh, length, offset)

    def write(self, path, buf, offset, fh):
        return self._call(os.pwrite, fh, buf, offset)

    def truncate(self, path, length, fh=None):
        if fh is not None:
            return self._call(os.ftruncate, fh, length)
        return self._call(os.truncate, self._p(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        return self._call(os.close, fh)

    def fsync(self, path, datasync, fh):
        start = time.monotonic()
        try:
            with open(self.control) as f:
                mode = f.read().split()
        except OSError:
            mode = []
        result = "ok"
        name = os.path.basename(path)
        try:
            if mode[:1] == ["fail"] and mode[1:2] in ([], [name]):
                result = "EIO"
                raise FuseOSError(errno.EIO)
            if mode[:1] == ["slow"] and len(mode) > 1 and mode[2:3] in ([], [name]):
                time.sleep(float(mode[1]))
            self._call(os.fsync, fh)
            return 0
        finally:
            with open(self.control + ".log", "a") as log:
                log.write(f"fsync {name} {start:.6f} {time.monotonic():.6f} {result}\n")

    def fsyncdir(self, path, datasync, fh):
        return 0

    def getxattr(self, path, name, position=0):
        return self._call(os.getxattr, self._p(path), name, follow_symlinks=False)

    def setxattr(self, path, name, value, options, position=0):
        return self._call(os.setxattr, self._p(path), name, value, options,
                          follow_symlinks=False)

    def listxattr(self, path):
        return self._call(os.listxattr, self._p(path), follow_symlinks=False)

    def removexattr(self, path, name):
        return self._call(os.removexattr, self._p(path), name, follow_symlinks=False)


def main():
    backing, mountpoint, control = sys.argv[1:4]
    FUSE(SyncFs(backing, control), mountpoint, foreground=True, allow_other=True,
         nothreads=False, default_permissions=True)


if __name__ == "__main__":
    main()
