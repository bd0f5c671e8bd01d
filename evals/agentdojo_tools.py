"""AgentDojo's tools as Reins declares them: read-only or not, the sink arguments (the ones that
direct an effect or carry data out) and the words a request uses for the action.

Written once, from what each tool does — never from a task or an attack. A read-only tool that
only reads the user's own data has no sink; one that reaches outside (a web page) has its URL as
an egress sink, as has every recipient data or money leaves to. Text the model writes for a
recipient (a body, a subject, an event's title) is ``free``: checked for tainted values only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Declaration:
    read_only: bool
    sinks: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()  # sinks that send data out: a URL, a recipient outside the user's account
    free: tuple[str, ...] = ()  # sinks the model writes (a body, a subject): checked for tainted values only


_READ = Declaration(read_only=True)
_MAIL = ("recipients", "cc", "bcc", "attachments", "subject", "body")
_MONEY = ("recipient", "amount", "subject")
_SEND = ("send", "forward", "reply", "write", "tell", "message")

DECLARATIONS: dict[str, Declaration] = {
    # e-mail, contacts, calendar, files (workspace; calendar and e-mail also in travel)
    "send_email": Declaration(False, _MAIL, _SEND, ("recipients", "cc", "bcc"), ("subject", "body")),
    "delete_email": Declaration(False, ("email_id",), ("delete", "remove")),
    "get_unread_emails": _READ, "get_sent_emails": _READ, "get_received_emails": _READ, "get_draft_emails": _READ,
    "search_emails": _READ, "search_contacts_by_name": _READ, "search_contacts_by_email": _READ,
    "get_current_day": _READ, "search_calendar_events": _READ, "get_day_calendar_events": _READ,
    # an event's text goes to its participants; booking a room or a table is not making an event
    "create_calendar_event": Declaration(False, ("participants", "title", "description", "location"),
                                         ("calendar", "event", "appointment", "meeting", "schedule", "remind"),
                                         ("participants",), ("title", "description")),
    "cancel_calendar_event": Declaration(False, ("event_id",), ("cancel", "delete", "remove")),
    "reschedule_calendar_event": Declaration(False, ("event_id",), ("reschedule", "move", "change", "postpone")),
    "add_calendar_event_participants": Declaration(False, ("event_id", "participants"), ("add", "invite"),
                                                   ("participants",)),
    "append_to_file": Declaration(False, ("file_id",), ("append", "add", "write", "update")),
    "search_files_by_filename": _READ, "get_file_by_id": _READ, "list_files": _READ, "search_files": _READ,
    "create_file": Declaration(False, ("filename",), ("create", "write", "save", "make")),
    "delete_file": Declaration(False, ("file_id",), ("delete", "remove")),
    "share_file": Declaration(False, ("file_id", "email", "permission"), ("share", "give", "grant"), ("email",)),
    # travel
    "get_user_information": _READ, "get_all_hotels_in_city": _READ, "get_hotels_prices": _READ,
    "get_rating_reviews_for_hotels": _READ, "get_hotels_address": _READ, "get_all_restaurants_in_city": _READ,
    "get_cuisine_type_for_restaurants": _READ, "get_restaurants_address": _READ,
    "get_rating_reviews_for_restaurants": _READ, "get_dietary_restrictions_for_all_restaurants": _READ,
    "get_contact_information_for_restaurants": _READ, "get_price_for_restaurants": _READ,
    "check_restaurant_opening_hours": _READ, "get_all_car_rental_companies_in_city": _READ,
    "get_car_types_available": _READ, "get_rating_reviews_for_car_rental": _READ, "get_car_fuel_options": _READ,
    "get_car_rental_address": _READ, "get_car_price_per_day": _READ, "get_flight_information": _READ,
    "reserve_hotel": Declaration(False, ("hotel",), ("reserve", "book")),
    "reserve_car_rental": Declaration(False, ("company",), ("reserve", "book", "rent")),
    "reserve_restaurant": Declaration(False, ("restaurant",), ("reserve", "book", "table")),
    # banking
    "get_iban": _READ, "get_balance": _READ, "get_most_recent_transactions": _READ,
    "get_scheduled_transactions": _READ, "read_file": _READ, "get_user_info": _READ,
    "send_money": Declaration(False, _MONEY, ("send", "pay", "transfer", "refund"), ("recipient",), ("subject",)),
    "schedule_transaction": Declaration(False, _MONEY, ("schedule", "set", "recurring", "standing"), ("recipient",),
                                        ("subject",)),
    "update_scheduled_transaction": Declaration(False, ("id", *_MONEY), ("update", "change", "adjust", "modify",
                                                                          "fix", "correct"), ("recipient",), ("subject",)),
    "update_password": Declaration(False, ("password",), ("update", "change", "password")),
    "update_user_info": Declaration(False, ("first_name", "last_name", "street", "city"),
                                    ("update", "change", "move", "address")),
    # slack
    "get_channels": _READ, "read_channel_messages": _READ, "read_inbox": _READ, "get_users_in_channel": _READ,
    "get_webpage": Declaration(True, ("url",), egress=("url",)),  # reaches outside: the URL carries data out
    "add_user_to_channel": Declaration(False, ("user", "channel"), ("add", "invite")),
    "send_direct_message": Declaration(False, ("recipient", "body"), _SEND, ("recipient",), ("body",)),
    "send_channel_message": Declaration(False, ("channel", "body"), (*_SEND, "post"), ("channel",), ("body",)),
    "invite_user_to_slack": Declaration(False, ("user", "user_email"), ("invite", "add"), ("user_email",)),
    "remove_user_from_slack": Declaration(False, ("user",), ("remove", "delete", "kick")),
    "post_webpage": Declaration(False, ("url", "content"), ("post", "publish", "upload"), ("url",), ("content",)),
}
