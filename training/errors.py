"""Errors of training, named for the condition; messages name the dataset, model or option."""


class TrainingError(Exception):
    """Base class for training errors the CLI turns into a clear message."""


class BadTrainingConfig(TrainingError, ValueError):
    """An option or combination of options that cannot run (checked before any compute)."""


class WrongExportKind(TrainingError):
    """The dataset version has no export of the kind a stage needs (e.g. no ``grpo`` export)."""


class ModelNotFound(TrainingError, KeyError):
    """No model of that name in the lake's registry, and no such local folder."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "model not found"
