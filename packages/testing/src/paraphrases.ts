/**
 * Statements and questions that ask for them in other words: apart from stop words, no question
 * shares a word (nor the first five letters of one) with its statement, so keyword search cannot
 * find the answer and semantic search must. Topics differ from one pair to the next, so each
 * question has one right answer. Used by the ai-mode tests and by `pnpm bench`.
 */
export interface Paraphrase {
  statement: string;
  question: string;
}

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
