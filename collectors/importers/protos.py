"""The two protobuf schemas the TFRecord datasets need, built at run time (no TensorFlow,
no generated code): ``tf.train.Example`` and android_env's ``AndroidAccessibilityForest``.

Field numbers and types follow tensorflow/core/example/{example,feature}.proto and
android_env/proto/a11y/*.proto. Only the fields importers read are declared; anything
else in a message (actions, clickable spans, ...) parses as an unknown field and is kept.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_TYPES = {"int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "float": _F.TYPE_FLOAT, "string": _F.TYPE_STRING,
          "bytes": _F.TYPE_BYTES, "bool": _F.TYPE_BOOL}


def _message(file: descriptor_pb2.FileDescriptorProto, name: str, fields: list[tuple], parent=None):
    """Add message ``name`` with fields (name, number, type, repeated[, oneof]) to ``file``."""
    msg = (parent.nested_type if parent is not None else file.message_type).add(name=name)
    for field_name, number, kind, repeated, *oneof in fields:
        f = msg.field.add(name=field_name, number=number,
                          label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
        if kind in _TYPES:
            f.type = _TYPES[kind]
            if repeated and kind in ("int32", "int64", "float"):
                f.options.packed = True
        else:
            f.type, f.type_name = _F.TYPE_MESSAGE, kind
        if oneof:
            if not msg.oneof_decl:
                msg.oneof_decl.add(name=oneof[0])
            f.oneof_index = 0
    return msg


def _build_example(pool: descriptor_pool.DescriptorPool) -> None:
    file = descriptor_pb2.FileDescriptorProto(name="phoneloop/tf_example.proto", package="tensorflow",
                                              syntax="proto3")
    _message(file, "BytesList", [("value", 1, "bytes", True)])
    _message(file, "FloatList", [("value", 1, "float", True)])
    _message(file, "Int64List", [("value", 1, "int64", True)])
    _message(file, "Feature", [("bytes_list", 1, ".tensorflow.BytesList", False, "kind"),
                               ("float_list", 2, ".tensorflow.FloatList", False, "kind"),
                               ("int64_list", 3, ".tensorflow.Int64List", False, "kind")])
    features = _message(file, "Features", [("feature", 1, ".tensorflow.Features.FeatureEntry", True)])
    entry = _message(file, "FeatureEntry", [("key", 1, "string", False), ("value", 2, ".tensorflow.Feature", False)],
                     parent=features)
    entry.options.map_entry = True
    _message(file, "Example", [("features", 1, ".tensorflow.Features", False)])
    pool.Add(file)


def _build_forest(pool: descriptor_pool.DescriptorPool) -> None:
    file = descriptor_pb2.FileDescriptorProto(name="phoneloop/a11y.proto", package="android_env", syntax="proto3")
    _message(file, "ProtoRect", [("left", 1, "int32", False), ("top", 2, "int32", False),
                                 ("right", 3, "int32", False), ("bottom", 4, "int32", False)])
    node = [("unique_id", 1, "int32"), ("bounds_in_screen", 2, ".android_env.ProtoRect"), ("class_name", 3, "string"),
            ("content_description", 4, "string"), ("hint_text", 5, "string"), ("package_name", 6, "string"),
            ("text", 7, "string"), ("view_id_resource_name", 10, "string"), ("window_id", 11, "int32"),
            ("is_checkable", 12, "bool"), ("is_checked", 13, "bool"), ("is_clickable", 14, "bool"),
            ("is_editable", 15, "bool"), ("is_enabled", 16, "bool"), ("is_focusable", 17, "bool"),
            ("is_focused", 18, "bool"), ("is_long_clickable", 19, "bool"), ("is_password", 20, "bool"),
            ("is_scrollable", 21, "bool"), ("is_selected", 22, "bool"), ("is_visible_to_user", 23, "bool"),
            ("depth", 27, "int32")]
    _message(file, "AndroidAccessibilityNodeInfo", [(n, k, t, False) for n, k, t in node]
             + [("child_ids", 25, "int32", True)])
    _message(file, "AndroidAccessibilityTree", [("nodes", 1, ".android_env.AndroidAccessibilityNodeInfo", True)])
    _message(file, "AndroidAccessibilityWindowInfo", [
        ("bounds_in_screen", 1, ".android_env.ProtoRect", False), ("display_id", 2, "int32", False),
        ("id", 3, "int32", False), ("layer", 4, "int32", False), ("title", 5, "string", False),
        ("window_type", 6, "int32", False), ("is_active", 8, "bool", False), ("is_focused", 9, "bool", False),
        ("tree", 11, ".android_env.AndroidAccessibilityTree", False)])
    _message(file, "AndroidAccessibilityForest", [("windows", 1, ".android_env.AndroidAccessibilityWindowInfo", True)])
    pool.Add(file)


_POOL = descriptor_pool.DescriptorPool()
_build_example(_POOL)
_build_forest(_POOL)

Example = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("tensorflow.Example"))
AndroidAccessibilityForest = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName("android_env.AndroidAccessibilityForest"))


def features(data: bytes) -> dict[str, list]:
    """A serialized ``tf.train.Example`` -> {name: list of values} (bytes, floats or ints)."""
    example = Example()
    example.ParseFromString(data)
    out = {}
    for name, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        out[name] = list(getattr(feature, kind).value) if kind else []
    return out


def example(values: dict[str, list]) -> bytes:
    """{name: list of bytes | str | float | int} -> a serialized ``tf.train.Example`` (for fixtures)."""
    ex = Example()
    for name, items in values.items():
        feature = ex.features.feature[name]
        items = list(items)
        if items and isinstance(items[0], str):
            items = [s.encode("utf-8") for s in items]
        if items and isinstance(items[0], bytes):
            feature.bytes_list.value.extend(items)
        elif items and isinstance(items[0], float):
            feature.float_list.value.extend(items)
        else:
            feature.int64_list.value.extend(items)
    return ex.SerializeToString()
