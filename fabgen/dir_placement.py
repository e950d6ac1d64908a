"""Make the output tree's directories so that ext4 spreads them, and so their files, over its block groups.

Why it matters: on ext4 without a journal, creating an inode skips every inode
of its block group freed in the last few minutes, rescanning them from the
group's start for each new inode (``recently_deleted`` in the kernel's
``ialloc.c``). A group that just lost a few thousand inodes (an old output tree
removed, another user's files) makes every file created in it pay for all of
them: thousands of files into such a group cost seconds of system time.

Where a new directory goes is ext4's choice, and its files follow it:

- Below a directory marked as the top of a hierarchy (``chattr +T``, as the
  writer marks its temporary tree), ext4 runs Orlov's search over every block
  group and takes the one with the fewest directories and above-average free
  space, starting from a hash of the new directory's name. A group that an
  old tree's directory just left is the best such group. With a fixed name
  (``switches``), the search starts at the same group every run and comes back
  to the group the last removed tree used, full of inodes freed a minute ago:
  its 6,144 switch files took 4 to 5 s to create. So each top-level directory
  is made under a random name and renamed at once: the rename keeps the group,
  and the search starts somewhere new each run.
- Below a directory without the mark, a new directory goes where the
  parent's last one went, while that group has room. The host directories
  (3,072 at 24k GPUs, 32,768 at 262k) are made with the mark set on
  ``hosts/`` for one in :data:`SPREAD_EVERY` only: that one goes through
  Orlov's search, and the next ones follow it into its group. The tree ends up
  in a few hundred groups, so no group holds more than a few dozen of its
  inodes for a later run to skip, and the search (a pass over every group
  descriptor: 2,048 on the bench VM's 256 GB disk) runs a sixteenth as often.

Measured on the bench VM (journal-less ext4, 256 GB; a 24k ``generate``,
system time; three runs each, the order rotated; the README's Performance
section has every run): on a quiet disk 1.5 to 1.8 s with fixed names and
every host directory searched, 1.1 s with this placement (131k: 8.6 against
6.4 s); right after ``rm -rf`` of the output, 5.2 to 6.5 s against 1.7 to
2.2 s; regenerating in place, 1.5 to 1.8 s against 1.6 to 1.8 s. Right after
other large removals most runs still take 5 to 6 s either way, probably
because a group that just lost its only directory is the one Orlov wants
wherever its search starts. A journaled ext4 has no such scan and other file
systems no such flag; there the mark and the rename only cost a few system
calls.
"""

from __future__ import annotations

import array
import errno
import os
import sys

SPREAD_EVERY = 16
"""One subdirectory of a top-level directory in this many goes through Orlov's search; the rest follow it."""

_FS_IOC_GETFLAGS, _FS_IOC_SETFLAGS, _FS_TOPDIR_FL = 0x80086601, 0x40086602, 0x00020000
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def set_top_of_hierarchy(path: str, on: bool = True) -> bool:
    """Set (or clear) ext4's top-of-hierarchy flag on the directory ``path``; False where there is no such flag.

    Only an allocation hint: where the file system has no such flag (tmpfs, XFS,
    macOS) or the caller may not set it, nothing changes and the write goes on.
    """
    if sys.platform != "linux":
        return False
    import fcntl

    try:
        fd = os.open(path, _OPEN_DIR)
    except OSError:
        return False
    try:
        flags = array.array("i", [0])  # the kernel reads and writes an int
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags)
        wanted = flags[0] | _FS_TOPDIR_FL if on else flags[0] & ~_FS_TOPDIR_FL
        if wanted != flags[0]:
            flags[0] = wanted
            fcntl.ioctl(fd, _FS_IOC_SETFLAGS, flags)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class DirectoryPlacement:
    """Makes the directories of one new tree below ``root`` (see the module's docstring for why, and the figures).

    ``root`` is marked as a top of a hierarchy, so each top-level directory goes
    through Orlov's search (from a random name); the subdirectories of a
    top-level directory are marked in turn, one in :data:`SPREAD_EVERY`.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.flag_works = set_top_of_hierarchy(root)
        self._made_below: dict[str, int] = {}
        """Top-level directory -> how many subdirectories were made in it so far."""

    def mkdir(self, rel: str) -> None:
        """Make ``root/rel`` (its parent exists); FileExistsError when something is there already, as ``os.mkdir``."""
        path = f"{self.root}/{rel}"
        top, _, below = rel.partition("/")
        if not below:
            self._mkdir_top(path)
            return
        if self.flag_works and "/" not in below:  # one level down: a host directory in hosts/
            made = self._made_below.get(top, 0)
            self._made_below[top] = made + 1
            if made % SPREAD_EVERY < 2:  # the flag changes only here: on for the first of SPREAD_EVERY, off after it
                set_top_of_hierarchy(f"{self.root}/{top}", made % SPREAD_EVERY == 0)
        os.mkdir(path)

    @staticmethod
    def _mkdir_top(path: str) -> None:
        """``os.mkdir(path)`` under a random name first, so ext4's search for its group starts somewhere new."""
        made = f"{path}.{os.urandom(6).hex()}.fabgen-mkdir"
        os.mkdir(made)
        try:
            if os.path.lexists(path):  # rename() would replace an empty directory, or say ENOTDIR for a file
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
            os.rename(made, path)
        except BaseException:
            os.rmdir(made)
            raise
