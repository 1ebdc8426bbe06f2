/**
 * Statements and questions that ask for them in other words: apart from stop words, no question
 * shares a word (nor the first five letters of one) with its statement, so keyword search cannot
 * find the answer and semantic search must. Topics differ from one pair to the next, so each
 * question has one right answer. Used by the ai-mode tests and by `pnpm bench`.
 *
 * Two sets of thirty, on sixty different topics: PARAPHRASES_DEV, to tune ai mode's ranking on
 * (bench/ai/ai-tune.ts), and PARAPHRASES, the test set, whose figures are the ones reported. The
 * test set once chose today's constants; from now on nothing is tuned on it.
 */
export interface Paraphrase {
  statement: string;
  question: string;
}

/** The test set: the figures `pnpm bench` reports. Do not tune on it (see PARAPHRASES_DEV). */
export const PARAPHRASES: readonly Paraphrase[] = [
  {
    statement:
      "The refund will be paid to your card within five business days after the returned item reaches our warehouse.",
    question: "How long until I get my money after I ship a purchase to the store?",
  },
  {
    statement: "Employees may work from home up to three days per week with the approval of their manager.",
    question: "Can staff do their job remotely, and how often?",
  },
  {
    statement:
      "The vaccine caused mild fever and soreness in the arm for about one day in most trial participants.",
    question: "What side effects did people get from the injection?",
  },
  {
    statement: "Our quarterly earnings rose sharply thanks to strong demand for electric cars in Europe.",
    question: "Why did profits increase during the last three months?",
  },
  {
    statement:
      "The tenant must give the landlord sixty days written notice before moving out of the apartment.",
    question: "How early should a renter tell the property owner they are leaving the flat?",
  },
  {
    statement: "Heavy rainfall flooded several villages and forced thousands of residents to evacuate.",
    question: "Which storm damage made people leave their homes?",
  },
  {
    statement: "The surgeon removed the patient's appendix during a short operation on Tuesday.",
    question: "Which medical procedure did the doctor perform?",
  },
  {
    statement: "The telescope captured images of a distant galaxy formed shortly after the big bang.",
    question: "What did the astronomers photograph in deep space?",
  },
  {
    statement: "Children who read books at bedtime develop larger vocabularies by the age of six.",
    question: "Does evening storytelling help kids learn more words?",
  },
  {
    statement: "The bakery sells fresh bread, croissants and cakes every morning from seven o'clock.",
    question: "Where can I buy pastries early in the day?",
  },
  {
    statement: "Passwords must be at least twelve characters long and changed every ninety days.",
    question: "What are the rules for login credentials?",
  },
  {
    statement: "The train to the airport departs every fifteen minutes from platform four.",
    question: "How frequently do railway services run to the flights terminal?",
  },
  {
    statement: "Smoking greatly increases the risk of lung cancer and heart disease.",
    question: "Is tobacco harmful to health?",
  },
  {
    statement: "The museum is closed on Mondays and opens at ten in the morning on other days.",
    question: "What are the gallery's visiting hours?",
  },
  {
    statement: "Coffee beans are roasted at high temperature to bring out their flavor and aroma.",
    question: "How are espresso grounds heated to improve the taste?",
  },
  {
    statement: "The company laid off two hundred workers after the factory closed.",
    question: "How many jobs were cut when the plant shut down?",
  },
  {
    statement: "Volunteers planted a thousand trees along the river to prevent soil erosion.",
    question: "Who helped reforest the stream banks?",
  },
  {
    statement: "The defendant was found guilty of fraud and sentenced to four years in prison.",
    question: "What punishment did the court give the accused for cheating?",
  },
  {
    statement: "Our hotel offers free breakfast and wireless internet to all guests.",
    question: "Is the morning meal included when staying at the inn?",
  },
  {
    statement: "The athlete broke the world record in the marathon with a time of two hours.",
    question: "Which runner achieved the fastest long distance race ever?",
  },
  {
    statement: "Mortgage interest rates climbed to their highest level in a decade.",
    question: "Are home loans getting more expensive?",
  },
  {
    statement: "The engine overheated because the radiator was leaking coolant.",
    question: "Why did the car motor get too hot?",
  },
  {
    statement: "Please submit your expense receipts to the finance department by Friday.",
    question: "When should I hand in the bills for reimbursement to accounting?",
  },
  {
    statement: "The volcano erupted overnight, covering nearby towns in ash.",
    question: "Did the mountain explode and spread dust on the cities?",
  },
  {
    statement: "The puppy needs vaccinations and regular walks to stay healthy.",
    question: "How should I care for my young dog?",
  },
  {
    statement: "The elections were postponed because of widespread violence at polling stations.",
    question: "Why was the vote delayed?",
  },
  {
    statement: "Solar panels on the roof generate enough electricity to power the whole house.",
    question: "Can sunlight energy run a home?",
  },
  {
    statement: "The orchestra performed a symphony by Beethoven to a sold out concert hall.",
    question: "Which classical music did the musicians play for the audience?",
  },
  {
    statement: "Drinking plenty of water helps prevent headaches and fatigue.",
    question: "Why should I keep hydrated?",
  },
  {
    statement: "The software update fixes a security flaw that let attackers steal user data.",
    question: "Which patch closes the vulnerability hackers exploited?",
  },
];

/**
 * The development set: thirty more pairs by the same rules, on topics of their own (none of the
 * test set's), to tune ai mode's ranking on. Reported beside the test set, never instead of it.
 */
export const PARAPHRASES_DEV: readonly Paraphrase[] = [
  {
    statement: "Each day a borrowed novel is kept past its due date adds twenty cents to the reader's fine.",
    question: "How much does the library charge when books come back overdue?",
  },
  {
    statement: "Brushing twice daily with fluoride toothpaste protects enamel against cavities.",
    question: "How can I keep my teeth from decaying?",
  },
  {
    statement: "The reception after the wedding will be held in a barn with dinner for two hundred guests.",
    question: "Where will the newlyweds and their friends eat after the ceremony?",
  },
  {
    statement: "To cancel a gym subscription, fill in a form at the front desk one month ahead.",
    question: "How do I end my fitness center membership?",
  },
  {
    statement:
      "When nobody answers the door, the courier leaves the parcel with a neighbour or at the post office.",
    question: "What happens to my package if I am out during delivery?",
  },
  {
    statement: "Recycling bins are emptied on alternate Thursdays, so put them on the curb the night before.",
    question: "When is the rubbish picked up for reuse?",
  },
  {
    statement: "Classes are cancelled on Friday because teachers attend a training day.",
    question: "Why won't pupils have lessons at the end of this week?",
  },
  {
    statement:
      "Drivers who stop in a bus lane during rush hour are fined eighty pounds and their cars are towed.",
    question: "What is the penalty for parking a vehicle where only public transport may go at busy times?",
  },
  {
    statement: "Boil the spaghetti in salted water for nine minutes until it is tender but still firm.",
    question: "How long do I cook pasta?",
  },
  {
    statement: "Our policy covers theft of bicycles locked outside, up to a value of eight hundred euros.",
    question: "Will insurance pay if someone steals my bike from the street?",
  },
  {
    statement: "Take one tablet each morning with food to lower your blood pressure.",
    question: "How should I use the hypertension medicine?",
  },
  {
    statement: "Candidates who pass the written test are invited to a final interview with the hiring panel.",
    question: "What happens after applicants do well on the exam for the job?",
  },
  {
    statement: "We booked a magician and ordered a chocolate cake for our daughter's birthday party.",
    question: "What entertainment and dessert are planned to celebrate our little girl?",
  },
  {
    statement: "Apply sunscreen every two hours at the beach to avoid getting burned.",
    question: "How often should I put on lotion against UV rays by the sea?",
  },
  {
    statement: "A wasp sting swells and itches for a day, and an ice pack eases the pain.",
    question: "How do I treat an insect bite?",
  },
  {
    statement: "If the wifi stops working, unplug the router for thirty seconds and plug it back in.",
    question: "What should I try when the household network connection keeps dropping?",
  },
  {
    statement: "Income tax returns for last year are due online before the thirtieth of April.",
    question: "What is the deadline for declaring my annual wages to the government?",
  },
  {
    statement: "If your passport is stolen abroad, report it to the police and contact the nearest embassy.",
    question: "What should travellers do after losing their travel document in a foreign country?",
  },
  {
    statement: "Groups of more than eight people need to book a table at the restaurant two days beforehand.",
    question: "How far in advance should a large party reserve somewhere to dine?",
  },
  {
    statement: "A dripping kitchen tap usually just needs a new rubber washer.",
    question: "How can I mend a leaky faucet above the sink?",
  },
  {
    statement: "Wool sweaters should be washed by hand in cold water and left to dry on a towel.",
    question: "How do I clean knitted jumpers so they do not shrink?",
  },
  {
    statement: "The chess club meets on Wednesday evenings and welcomes beginners of any age.",
    question: "When can newcomers practise the board game with other players?",
  },
  {
    statement: "Tomato seedlings should stay indoors until the last frost has passed in spring.",
    question: "When is it safe to move young vegetable crops out into the garden?",
  },
  {
    statement: "The babysitter earns twelve dollars an hour and stays until midnight at weekends.",
    question: "How much does the nanny cost per evening, and how late can she remain?",
  },
  {
    statement: "The bank takes a fee of thirty-five dollars whenever your account goes below zero.",
    question: "What does it cost to spend more than I have in my checking?",
  },
  {
    statement:
      "Scholarship applications for next year close on the first of March and require two reference letters.",
    question: "By what day must students send in requests for tuition grants?",
  },
  {
    statement:
      "The barber cuts hair without an appointment on weekdays, but Saturdays are booked weeks ahead.",
    question: "Can I walk in for a trim, or do I have to schedule a visit?",
  },
  {
    statement: "Egg prices have doubled this year because bird flu has killed millions of hens.",
    question: "Why are omelette ingredients costing so much at the supermarket?",
  },
  {
    statement: "New mothers receive sixteen weeks of paid maternity leave at full salary.",
    question: "How much time off do women get after giving birth?",
  },
  {
    statement: "The phone battery drains quickly when the screen brightness is set to maximum.",
    question: "Why does my cellular device die so fast?",
  },
];
