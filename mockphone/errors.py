"""Errors of the mock phone, named for the condition they report."""


class MockPhoneError(Exception):
    """Base class for every error mockphone raises on purpose."""


class PhoneClosed(MockPhoneError):
    """The phone was closed; reset() it or make a new one."""


class UnknownApp(MockPhoneError, KeyError):
    """No installed mock app has that package, label or short name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown app"


class ToolNotRegistered(MockPhoneError, KeyError):
    """A ``tool`` action named a tool that was never registered on the phone."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "tool not registered"


class UnknownTask(MockPhoneError, KeyError):
    """No registered task matches a name or selector."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown task"


class InvalidTaskParams(MockPhoneError, ValueError):
    """Task parameters do not match the task's schema; the message names the parameter."""


class TaskNotInitialized(MockPhoneError):
    """A task was verified or solved before ``initialize_task`` ran on that phone."""


class OracleFailed(MockPhoneError):
    """An oracle demonstration could not find the element it needed on screen."""


class BadPerturbationProfile(MockPhoneError, ValueError):
    """An unknown perturbation profile name, or a profile YAML with an unknown kind or a bad rate (names the line)."""
