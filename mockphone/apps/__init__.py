"""The mock apps installed on a default MockPhone."""

from __future__ import annotations


def default_apps() -> list[type]:
    """Every mock app class, in reset order (Contacts first: other apps draw their people from it)."""
    from mockphone.apps.assistant import AssistantApp
    from mockphone.apps.bank import BankApp
    from mockphone.apps.calendar import CalendarApp
    from mockphone.apps.clock import ClockApp
    from mockphone.apps.contacts import ContactsApp
    from mockphone.apps.files import FilesApp
    from mockphone.apps.forms import FormsApp
    from mockphone.apps.mail import MailApp
    from mockphone.apps.maps import MapsApp
    from mockphone.apps.messages import MessagesApp
    from mockphone.apps.music import MusicApp
    from mockphone.apps.news import NewsApp
    from mockphone.apps.notes import NotesApp
    from mockphone.apps.rides import RidesApp
    from mockphone.apps.settings import SettingsApp
    from mockphone.apps.shop import ShopApp
    from mockphone.apps.superapp import SuperApp
    from mockphone.apps.todo import TodoApp
    from mockphone.apps.weather import WeatherApp

    return [ContactsApp, MessagesApp, SettingsApp, NotesApp, ClockApp, CalendarApp, MailApp, FilesApp, ShopApp,
            AssistantApp, BankApp, SuperApp, FormsApp, MapsApp, RidesApp,
            TodoApp, WeatherApp, MusicApp, NewsApp]
