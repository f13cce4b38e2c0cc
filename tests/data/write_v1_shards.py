#!/usr/bin/python3
"""Rewrite every shard of a dataset directory in shard format version 1.

    tests/data/write_v1_shards.py DIR

Version 1 is what prepare_data wrote before shards carried checksums: token
arrays chunked (same chunks and compression as now), offsets, ids and labels
contiguous, no Fletcher-32 filter, HDF5's oldest file format. The same
examples are written by h5py, not by the project's writer, and the
manifest's sha256 entries are updated. A dataset of such shards predates
split indexes: each split's index (which names the shards it was built from
by their sha256) is removed, so that `prepare_data --upgrade DIR` indexes
the rewritten shards. The tests use it for "old shards still read"; the data
benchmark for the throughput without checksums.
"""
import hashlib
import json
import os
import sys

import h5py


def rewrite(path):
    temp = path + ".v1"
    with h5py.File(path, "r") as old, h5py.File(temp, "w", libver="earliest") as new:
        for key, value in old.attrs.items():
            new.attrs[key] = value
        new.attrs["format_version"] = 1
        for name in ["src/tokens", "src/offsets", "tgt/tokens", "tgt/offsets", "ids", "labels"]:
            if name not in old:
                continue
            data = old[name]
            if name.endswith("tokens"):
                new.create_dataset(name, data=data[()], chunks=data.chunks, maxshape=(None,),
                                   compression=data.compression, compression_opts=data.compression_opts)
            else:
                new.create_dataset(name, data=data[()])
    os.replace(temp, path)


def main(directory):
    manifest_file = os.path.join(directory, "manifest.json")
    with open(manifest_file, encoding="utf-8") as f:
        manifest = json.load(f)
    for split in manifest["splits"].values():
        for shard in split["shards"]:
            path = os.path.join(directory, shard["file"])
            rewrite(path)
            with open(path, "rb") as f:
                shard["sha256"] = hashlib.sha256(f.read()).hexdigest()
        index = split.pop("index", None)
        if index:
            os.remove(os.path.join(directory, index["file"]))
    with open(manifest_file, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
